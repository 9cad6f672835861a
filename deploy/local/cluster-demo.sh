#!/usr/bin/env bash
# cluster-demo: three toolnexus replicas sharing one Redis (cluster.redis)
# and one sessions root, behind nginx round robin, on loopback. No
# containers: Debian's redis-server and nginx (apt-get install redis-server
# nginx). Ctrl-C stops everything it started.
#
#   make cluster-demo            # or: deploy/local/cluster-demo.sh BIN_DIR
#   toolnexus --addr 127.0.0.1:50050 --token demo-token-0123456789 list
#   toolnexus --addr 127.0.0.1:50050 --token demo-token-0123456789 reload   # "replicas: 3 of 3 applied"
#   MCP: http://127.0.0.1:8080/mcp (Authorization: Bearer demo-token-0123456789)
set -euo pipefail
bin=${1:-bin}
server=$bin/toolnexus-server
[ -x "$server" ] || { echo "cluster-demo: $server not found; run make build" >&2; exit 1; }
redis=$(command -v redis-server || true)
nginx=$(command -v nginx || echo /usr/sbin/nginx)
[ -n "$redis" ] || { echo "cluster-demo: redis-server not found (apt-get install redis-server)" >&2; exit 1; }
[ -x "$nginx" ] || { echo "cluster-demo: nginx not found (apt-get install nginx)" >&2; exit 1; }

GRPC=${GRPC:-127.0.0.1:50050} HTTP=${HTTP:-127.0.0.1:8080} REDIS_PORT=${REDIS_PORT:-6390}
dir=$(mktemp -d /tmp/toolnexus-cluster-demo.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

"$redis" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --requirepass demo-redis-password --loglevel warning &
pids+=($!)
printf 'demo-redis-password\n' > "$dir/redis-password"

grpc_up="" http_up=""
for i in 0 1 2; do
    cat > "$dir/r$i.json" <<JSON
{
  "debug": true, "skills": [],
  "builtins": { "workspace": "$dir/ws$i", "tools": { "webfetch": false } },
  "auth": { "tokens": [ { "name": "demo", "token": "demo-token-0123456789", "admin": true } ] },
  "sessions": { "shared": true, "root": "$dir/sessions" },
  "limits": { "principals": { "*": { "callsPerSecond": 5, "burst": 5 } } },
  "cluster": { "name": "demo", "redis": { "url": "redis://127.0.0.1:$REDIS_PORT/0", "password": "\${file:$dir/redis-password}" } },
  "server": { "listen": "127.0.0.1:5006$i", "metricsListen": "127.0.0.1:946$i", "mcp": { "listen": "127.0.0.1:808$((i + 1))" } }
}
JSON
    "$server" --config "$dir/r$i.json" 2> "$dir/r$i.log" &
    pids+=($!)
    grpc_up+="        server 127.0.0.1:5006$i;"$'\n'
    http_up+="        server 127.0.0.1:808$((i + 1));"$'\n'
done

user=""; [ "$(id -u)" = 0 ] && user="user root;"
cat > "$dir/nginx.conf" <<NGINX
$user
worker_processes 1;
pid $dir/nginx.pid;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $dir/body; proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi; uwsgi_temp_path $dir/uwsgi; scgi_temp_path $dir/scgi;
    upstream toolnexus { $grpc_up    }
    upstream toolnexus_mcp { $http_up    }
    server { listen $GRPC http2; location / { grpc_pass grpc://toolnexus; } }
    server {
        listen $HTTP;
        location / {
            proxy_pass http://toolnexus_mcp; proxy_http_version 1.1;
            proxy_set_header Connection ""; proxy_set_header Host \$http_host; proxy_buffering off;
        }
    }
}
NGINX
"$nginx" -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx.log" -g "daemon off;" &
pids+=($!)

sleep 1
echo "cluster-demo: 3 replicas, Redis on 127.0.0.1:$REDIS_PORT, nginx round robin:"
echo "  gRPC  $GRPC    MCP  http://$HTTP/mcp    token demo-token-0123456789"
echo "  logs  $dir/r{0,1,2}.log     Ctrl-C stops everything"
wait -n "${pids[@]}" || true
echo "cluster-demo: a process exited; stopping (see $dir/*.log)" >&2
