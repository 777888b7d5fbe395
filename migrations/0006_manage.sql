-- People manage their own conversations: an archived one leaves the sidebar and the home
-- list but stays whole, searchable and in staff review; a deleted one is removed, with a
-- record in the audit log (see store.DeleteConversation).
ALTER TABLE conversations ADD COLUMN archived_at TEXT;
