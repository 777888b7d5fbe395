package openai

import (
	"fmt"
	"strings"

	"github.com/parley-chat/parley/domain"
)

// toolName is the one tool the model is offered.
const toolName = domain.AskToolName

// askAppendix teaches the model how to ask the person, with the tool or, for models
// without tool calling, with the UserInputMetaData format (seeds/000).
const askAppendix = `## Asking the person

You talk with a person through Parley, a chat that can show forms. Only ask when you truly
need something to continue; when the conversation already says it, go ahead.

To ask, call the tool request_user_input:
- prompt: the question, as the person will read it;
- request_type: "clarification" (a free answer), "selection" (pick one of several options:
  put them in context.options as strings or objects with id and name) or "approval"
  (approve or reject, with an optional comment);
- context: supporting data (an object);
- fields (optional): your own form, a list of {name, label, description, kind, required,
  options [{value, label}], default, min, max, minLength, maxLength, pattern, minItems,
  maxItems}, kind one of text, textarea, number, integer, select, multiselect, boolean, date,
  file (the person uploads a file; the answer names the document, which you can then read).
Several independent questions may be several calls in one reply. The answer comes back as
the tool result: {"outcome":"answered","values":{...}}, or an outcome of declined,
cancelled, expired or superseded with a reason; then do not ask the same thing again.

If you cannot call tools, reply with only this, and nothing after it:

UserInputMetaData: {"require_user_input": true, "content": "What you need and why", "metadata": {"user_input": true, "input_fields": [{"name": "branch_name", "description": "The source branch", "type": "text", "required": true}, {"name": "base_branch", "description": "Target branch", "type": "select", "required": true, "options": ["main", "develop"]}]}}

Field types there are text, textarea, number, select and boolean. The person's answers then
come as the next message.

Never ask for passwords, tokens, API keys or other secrets, nor for email addresses: Parley
will not show such fields.`

// answerAppendix describes the final reply, which Parley also reads as a structured response.
const answerAppendix = `## Answering

Answer in Markdown. You may instead reply with only a JSON object
{"is_task_complete": true, "require_user_input": false, "content": "your answer in Markdown", "metadata": null}:
Parley then shows the content.`

// structuredAskNote tells a model that may ask that the structured response can carry a form.
const structuredAskNote = ` With "require_user_input": true and "metadata": {"input_fields": [...]}
(fields as in the UserInputMetaData format) it shows a form instead.`

// documentsAppendix teaches read_document; it is there when a message lists documents.
const documentsAppendix = `## Documents

A message may end with AVAILABLE_DOCUMENTS: files the person attached and long parts of
their message set aside. When you need what one says, call read_document with its id (and
an offset for the next part of a long one). Read only what you need.`

// trimmedNote is added when older messages did not fit the context window.
const trimmedNote = "\n\n(Older messages of this conversation were left out to fit your context window.)"

// systemPrompt is the operator's prompt followed by what Parley teaches every model, and
// what it teaches for this turn: reading documents, the person's language.
func (a *Agent) systemPrompt(t turn) string {
	var b strings.Builder
	if p := strings.TrimSpace(a.cfg.SystemPrompt); p != "" {
		b.WriteString(p)
		b.WriteString("\n\n")
	}
	if a.cfg.AllowQuestions {
		b.WriteString(askAppendix)
		b.WriteString("\n\n")
		b.WriteString(answerAppendix)
		b.WriteString(structuredAskNote)
	} else {
		b.WriteString(answerAppendix)
		b.WriteString(" Do not ask for forms; ask in plain text when you must.")
	}
	if t.read {
		b.WriteString("\n\n")
		b.WriteString(documentsAppendix)
	}
	if note := t.tools.note(); note != "" {
		b.WriteString("\n\n")
		b.WriteString(note)
	}
	if line := languageLine(t.language); line != "" {
		b.WriteString("\n\n")
		b.WriteString(line)
	}
	return b.String()
}

// askTool is the definition of request_user_input.
var askTool = functionDecl{
	Name:        toolName,
	Description: domain.AskToolDescription,
	Parameters:  domain.AskToolSchema,
}

// readTool is the definition of read_document, with the agent's limits.
func (a *Agent) readTool() functionDecl {
	def, limit := a.readLimits()
	return functionDecl{
		Name: readToolName,
		Description: "Read a document listed in AVAILABLE_DOCUMENTS. A long one comes in parts: " +
			"the result says where the next part starts.",
		Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"id":     map[string]any{"type": "integer", "description": "The document's id in AVAILABLE_DOCUMENTS."},
				"offset": map[string]any{"type": "integer", "description": "The byte to start at; default 0."},
				"limit": map[string]any{"type": "integer",
					"description": fmt.Sprintf("How many bytes to read; default %d, at most %d.", def, limit)},
				"name": map[string]any{"type": "string", "description": "The document's name, when you do not know its id."},
			},
			"required": []string{"id"},
		},
	}
}

// tools returns the tools offered to the model: request_user_input, when the agent may ask,
// and read_document, when a message lists documents.
func (a *Agent) tools(t turn) []chatTool {
	var tools []chatTool
	if a.cfg.AllowQuestions {
		tools = append(tools, function(askTool))
	}
	if t.read {
		tools = append(tools, function(a.readTool()))
	}
	return append(tools, t.tools.functions()...)
}

// toolNames lists the tools offered, for a model that called another one.
func (a *Agent) toolNames(t turn) []string {
	var names []string
	if a.cfg.AllowQuestions {
		names = append(names, toolName)
	}
	if t.read {
		names = append(names, readToolName)
	}
	for _, tool := range t.tools.tools {
		names = append(names, tool.Name)
	}
	return names
}

// expectedShape is told to the model when its tool arguments cannot be used.
const expectedShape = `Expected arguments: {"prompt": "the question", "request_type": "clarification" | "selection" | "approval", ` +
	`"context": {...}, "fields": [{"name": "...", "kind": "text", "required": true}]} (context and fields optional), as valid JSON.`
