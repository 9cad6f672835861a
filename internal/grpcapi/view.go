package grpcapi

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
)

// ViewMetadata is the gRPC metadata key that chooses a named view
// (server.mcp.views) on any RegistryService call: the caller then lists,
// searches, exports, watches and runs only the tools that view shows.
const ViewMetadata = "toolnexus-view"

// viewName is the view the request names, "" for the caller's whole tool set.
func viewName(ctx context.Context) string { return metadataValue(ctx, ViewMetadata) }

// view is the caller's view of the tool set: its token's allowlist,
// narrowed by the view its metadata chose — the same value the core's
// pipeline checks a call against. A view the server does not have is
// INVALID_ARGUMENT, naming those it has.
func (a *API) view(ctx context.Context) (core.View, error) { return a.viewNamed(ctx, viewName(ctx)) }

// checkView refuses a call naming a view the server does not have, before
// the core sees it (the core would show it no tool).
func (a *API) checkView(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	_, err := a.viewNamed(ctx, name)
	return err
}

func (a *API) viewNamed(ctx context.Context, name string) (core.View, error) {
	v, err := a.core.View(auth.From(ctx), core.ProtocolGRPC, name)
	if err != nil {
		return v, status.Errorf(codes.InvalidArgument, "%s: %v; send one of those, or no %s metadata for every tool your token allows", ViewMetadata, err, ViewMetadata)
	}
	return v, nil
}
