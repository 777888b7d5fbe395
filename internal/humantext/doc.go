// Package humantext writes what agents and people gave as people read it, the same for the
// page (views draws a question's context from its tree, as HTML), the conversation's Markdown
// export and the terminal client (chat): a question's context as a tree and as Markdown, an
// answered value as text, and the small text helpers these share.
package humantext
