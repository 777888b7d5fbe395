-- As SQLite's 0023_conversation_kind.sql: a conversation's kind, not a made-up agent name.
ALTER TABLE conversations ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'inbound'));
UPDATE conversations SET kind = 'inbound', agent = '' WHERE agent = 'parley:mcp';
