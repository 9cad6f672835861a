package grpcapi

import (
	"context"

	"google.golang.org/grpc"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// registryServiceDesc is RegistryService's descriptor with Execute served
// by r.executeHandler instead of the generated handler, which allocates
// the interceptor's UnaryServerInfo and a closure over the server on every
// call. The method set, names and stream handlers are the generated ones.
func (r *registryService) serviceDesc() *grpc.ServiceDesc {
	desc := pb.RegistryService_ServiceDesc
	desc.Methods = append([]grpc.MethodDesc(nil), desc.Methods...)
	for i := range desc.Methods {
		if desc.Methods[i].MethodName == "Execute" {
			desc.Methods[i].Handler = r.executeHandler
		}
	}
	r.executeInfo = &grpc.UnaryServerInfo{Server: r, FullMethod: pb.RegistryService_Execute_FullMethodName}
	r.executeUnary = func(ctx context.Context, req any) (any, error) {
		return r.Execute(ctx, req.(*pb.ExecuteRequest))
	}
	return &desc
}

// executeHandler does what the generated Execute handler does — decode
// the request, run it through the interceptor chain — with the chain's
// info and handler made once. Interceptors only read them.
func (r *registryService) executeHandler(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(pb.ExecuteRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return r.Execute(ctx, in)
	}
	return interceptor(ctx, in, r.executeInfo, r.executeUnary)
}
