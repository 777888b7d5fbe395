package openai

import (
	"fmt"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/parley-chat/parley/domain"
)

// This file is the reference for client_test.go: how Parley built its requests with
// openai-go's parameter types until it sent them with its own client, kept as it was.

// refParams is the request of a step, as openai-go's params.
func (a *Agent) refParams(msgs []message, t turn) oai.ChatCompletionNewParams {
	p := oai.ChatCompletionNewParams{Model: a.cfg.Model, Messages: make([]oai.ChatCompletionMessageParamUnion, 0, len(msgs))}
	for _, m := range msgs {
		p.Messages = append(p.Messages, m.refParam())
	}
	if a.cfg.Temperature != nil {
		p.Temperature = oai.Float(*a.cfg.Temperature)
	}
	p.Tools = a.refTools(t)
	if t.final && len(p.Tools) > 0 {
		p.ToolChoice.OfAuto = oai.String(string(oai.ChatCompletionToolChoiceOptionAutoNone))
	}
	return p
}

func (m message) refParam() oai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case roleSystem:
		return oai.SystemMessage(m.Content)
	case roleUser:
		return oai.UserMessage(m.Content)
	case roleTool:
		return oai.ToolMessage(m.Content, m.CallID)
	}
	if len(m.Calls) == 0 {
		return oai.AssistantMessage(m.Content)
	}
	var p oai.ChatCompletionAssistantMessageParam
	if m.Content != "" {
		p.Content.OfString = oai.String(m.Content)
	}
	for _, c := range m.Calls {
		p.ToolCalls = append(p.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
			},
		})
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &p}
}

var refAskTool = shared.FunctionDefinitionParam{
	Name:        toolName,
	Description: oai.String(domain.AskToolDescription),
	Parameters:  shared.FunctionParameters(domain.AskToolSchema),
}

func (a *Agent) refReadTool() shared.FunctionDefinitionParam {
	def, limit := a.readLimits()
	return shared.FunctionDefinitionParam{
		Name: readToolName,
		Description: oai.String("Read a document listed in AVAILABLE_DOCUMENTS. A long one comes in parts: " +
			"the result says where the next part starts."),
		Parameters: shared.FunctionParameters{
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

func (a *Agent) refTools(t turn) []oai.ChatCompletionToolUnionParam {
	var tools []oai.ChatCompletionToolUnionParam
	if a.cfg.AllowQuestions {
		tools = append(tools, oai.ChatCompletionFunctionTool(refAskTool))
	}
	if t.read {
		tools = append(tools, oai.ChatCompletionFunctionTool(a.refReadTool()))
	}
	return append(tools, t.tools.refFunctions()...)
}

func (tt toolTurn) refFunctions() []oai.ChatCompletionToolUnionParam {
	out := make([]oai.ChatCompletionToolUnionParam, 0, len(tt.tools))
	for _, t := range tt.tools {
		desc := t.Description
		if t.Title != "" && !strings.Contains(desc, t.Title) {
			desc = strings.TrimSpace(t.Title + ". " + desc)
		}
		out = append(out, oai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: oai.String(desc + " (tool server " + t.Server + ")"), Parameters: t.Schema,
		}))
	}
	return out
}

// refAnalyzerParams is the analyzer's request, as openai-go's params.
func (a *Agent) refAnalyzerParams(text string) oai.ChatCompletionNewParams {
	p := oai.ChatCompletionNewParams{
		Model:          a.cfg.Model,
		Messages:       []oai.ChatCompletionMessageParamUnion{oai.SystemMessage(analyzerPrompt), oai.UserMessage(text)},
		ResponseFormat: oai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}},
	}
	if a.cfg.Temperature != nil {
		p.Temperature = oai.Float(*a.cfg.Temperature)
	}
	return p
}
