package main

import (
	"context"
	"fmt"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

var cmdHealth = &command{
	name:     "health",
	synopsis: "[--service NAME]",
	summary:  "check grpc.health.v1; exit 1 unless SERVING",
	run:      runHealth,
}

func runHealth(c *cli, args []string) error {
	fs := c.flags(`Ask the server's grpc.health.v1 service for its status and print it
(SERVING, NOT_SERVING...). Exits 0 only when SERVING, so it works as a probe.
Needs no token.`)
	service := fs.String("service", "", "check one service, e.g. `toolnexus.v1.RegistryService` (default: the whole server)")
	if _, err := fs.parse(args, 0, 0); err != nil {
		return err
	}
	var status healthpb.HealthCheckResponse_ServingStatus
	err := unary(c, func(ctx context.Context, k *conn) (*healthpb.HealthCheckResponse, error) {
		resp, err := healthpb.NewHealthClient(k.cc).Check(ctx, &healthpb.HealthCheckRequest{Service: *service})
		status = resp.GetStatus()
		return resp, err
	}, func(resp *healthpb.HealthCheckResponse) error {
		fmt.Fprintln(c.stdout, resp.GetStatus())
		return nil
	})
	if err != nil {
		return err
	}
	if status != healthpb.HealthCheckResponse_SERVING {
		return &exitError{code: 1} // a probe: only SERVING exits 0
	}
	return nil
}
