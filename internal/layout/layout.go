// Package layout holds no code: its test holds the packages to the direction of their
// imports that docs/architecture.md draws (cmd -> {web, chat, bench} -> {views, store,
// runner, api} -> domain), so that the picture stays true.
package layout
