-- What a conversation holds is its kind, not a made-up agent name: the conversations of the
-- questions agents ask over Parley's MCP server were those of an agent "parley:mcp"; they
-- are now of kind 'inbound' and of no agent.
ALTER TABLE conversations ADD COLUMN kind TEXT NOT NULL DEFAULT 'chat' CHECK (kind IN ('chat', 'inbound'));
UPDATE conversations SET kind = 'inbound', agent = '' WHERE agent = 'parley:mcp';
