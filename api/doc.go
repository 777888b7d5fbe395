// Package api holds the JSON API's wire types (/api/v1, described by web/openapi.json): the
// requests', responses' and stream events' objects that the server (web) encodes, `parley
// chat` decodes, and the tests and the OpenAPI document speak of. It depends on the standard
// library and the domain only, so that a client can use it without the server.
package api
