package web_test

import (
	"github.com/parley-chat/parley/store"
	"github.com/parley-chat/parley/web"
)

// The database is every group of what the server needs of it.
var _ web.Store = (*store.DB)(nil)
