// Package tool defines the one uniform shape every toolnexus source produces:
// a Tool (name, description, JSON-Schema input, source label and an execute
// function) and the Result it returns.
//
// A failing tool is a value, not an error: Execute always returns a Result,
// and Result.IsError tells the model the call did not succeed. This package
// knows nothing about gRPC or protobuf; it is a plain Go library that the
// registry, the sources and the server all share.
//
// A tool from a plain function:
//
//	t, err := tool.New("greet", func(ctx context.Context, c tool.Call) tool.Result {
//		return tool.Success("hello", nil)
//	}, tool.WithDescription("Say hello"))
//
// Native and Typed wrap ordinary Go functions; see their docs.
package tool
