// Package deploy holds no code: it is the home of the deployment files
// (kubernetes/, grafana/) and of the tests that keep them true to the
// server — ports, probes, the config they mount, and every metric the
// dashboard queries. See docs/deploy.md.
package deploy
