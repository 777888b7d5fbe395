-- Account names are unique by what they look like, not only by their letters: name_key is
-- the name's confusable skeleton (agent.NameKey), so that "rооt" with Cyrillic о cannot sit
-- beside "root". SQL cannot compute it: accounts made before this have none (NULL, which a
-- unique index allows any number of) until the store fills it in, before it next makes an
-- account. Two old accounts that already look alike both stay; the later one's key is
-- marked so that it does not collide (see store.fillNameKeys).
ALTER TABLE users ADD COLUMN name_key TEXT;
CREATE UNIQUE INDEX users_name_key ON users (name_key);
