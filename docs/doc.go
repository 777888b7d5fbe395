// Package docs holds Parley's documentation: Markdown pages, indexed from the README at the
// repository's root. It has no code; its test checks the links of the README and of every
// page (that each file linked to exists, that each #fragment names a heading, that every
// page can be reached from the README) and that the README stays short.
package docs
