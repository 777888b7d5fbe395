// Package views renders Parley's pages with templ: view models built from domain values,
// and the components the server sends whole or patches into a page over Datastar's SSE.
// Agent output is Markdown, rendered and sanitized here before it reaches a page. Views may
// import domain types, never the store or the web server.
package views
