package deploy_test

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The Envoy recipe hashes the header the server reads onto a ring of the
// replicas the headless Service lists, over HTTP/2, and probes the health
// service the server serves.
func TestEnvoyRingHashesTheSessionHeader(t *testing.T) {
	var env struct {
		StaticResources struct {
			Listeners []struct {
				FilterChains []struct {
					Filters []struct {
						TypedConfig struct {
							RouteConfig struct {
								VirtualHosts []struct {
									Routes []struct {
										Route struct {
											Cluster    string `yaml:"cluster"`
											HashPolicy []struct {
												Header struct {
													HeaderName string `yaml:"header_name"`
												} `yaml:"header"`
											} `yaml:"hash_policy"`
										} `yaml:"route"`
									} `yaml:"routes"`
								} `yaml:"virtual_hosts"`
							} `yaml:"route_config"`
						} `yaml:"typed_config"`
					} `yaml:"filters"`
				} `yaml:"filter_chains"`
			} `yaml:"listeners"`
			Clusters []struct {
				Name         string         `yaml:"name"`
				LBPolicy     string         `yaml:"lb_policy"`
				ProtoOptions map[string]any `yaml:"typed_extension_protocol_options"`
				HealthChecks []struct {
					GRPC struct {
						ServiceName string `yaml:"service_name"`
					} `yaml:"grpc_health_check"`
				} `yaml:"health_checks"`
				LoadAssignment struct {
					Endpoints []struct {
						LBEndpoints []struct {
							Endpoint struct {
								Address struct {
									Socket struct {
										Address string `yaml:"address"`
										Port    int    `yaml:"port_value"`
									} `yaml:"socket_address"`
								} `yaml:"address"`
							} `yaml:"endpoint"`
						} `yaml:"lb_endpoints"`
					} `yaml:"endpoints"`
				} `yaml:"load_assignment"`
			} `yaml:"clusters"`
		} `yaml:"static_resources"`
	}
	readYAML(t, "kubernetes/components/hash-sessions/envoy.yaml", &env)
	route := env.StaticResources.Listeners[0].FilterChains[0].Filters[0].TypedConfig.RouteConfig.VirtualHosts[0].Routes[0].Route
	if len(route.HashPolicy) != 1 || route.HashPolicy[0].Header.HeaderName != "toolnexus-session" {
		t.Errorf("hash_policy %+v; want the toolnexus-session header", route.HashPolicy)
	}
	c := env.StaticResources.Clusters[0]
	if c.Name != route.Cluster || c.LBPolicy != "RING_HASH" {
		t.Errorf("cluster %s lb_policy %s; want %s with RING_HASH", c.Name, c.LBPolicy, route.Cluster)
	}
	if _, ok := c.ProtoOptions["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]; !ok {
		t.Error("the cluster must speak HTTP/2 to the replicas (gRPC)")
	}
	if len(c.HealthChecks) != 1 || c.HealthChecks[0].GRPC.ServiceName != "toolnexus.v1.RegistryService" {
		t.Errorf("health check %+v", c.HealthChecks)
	}
	sock := c.LoadAssignment.Endpoints[0].LBEndpoints[0].Endpoint.Address.Socket
	objs, _ := manifests(t)
	var headless struct {
		Spec struct {
			ClusterIP string `yaml:"clusterIP"`
			Ports     []struct {
				Port int `yaml:"port"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	n, ok := objs["Service/"+sock.Address]
	if !ok {
		t.Fatalf("Envoy resolves %s, which is no Service in deploy/kubernetes", sock.Address)
	}
	if err := n.Decode(&headless); err != nil {
		t.Fatal(err)
	}
	if headless.Spec.ClusterIP != "None" || headless.Spec.Ports[0].Port != sock.Port {
		t.Errorf("Envoy dials %s:%d; the Service is clusterIP %q port %d (it must be headless: one ring entry per pod)",
			sock.Address, sock.Port, headless.Spec.ClusterIP, headless.Spec.Ports[0].Port)
	}
}
