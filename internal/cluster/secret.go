package cluster

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"
)

// SharedSecret is the secret every replica of this deployment uses under
// name (e.g. the key that signs /mcp's requestState), made once: the
// first replica to ask stores n random bytes with SET NX, and every
// replica — that one included — reads back what won, so two replicas
// starting at once agree. It lives under the deployment's prefix, never
// expires, and is readable by whoever can read this Redis (who can
// already approve calls). ctx bounds it (at least 1 s by default).
func (c *Client) SharedSecret(ctx context.Context, name string, n int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, max(c.cfg.Timeout, time.Second))
	defer cancel()
	mine := make([]byte, n)
	if _, err := rand.Read(mine); err != nil {
		return nil, fmt.Errorf("cluster: no randomness for %s: %w", name, err)
	}
	key := c.Key("secret:" + name)
	if err := c.rdb.SetNX(ctx, key, base64.StdEncoding.EncodeToString(mine), 0).Err(); err != nil {
		return nil, fmt.Errorf("cluster: cannot store %s in Redis: %w", name, err)
	}
	v, err := c.rdb.Get(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("cluster: cannot read %s from Redis: %w", name, err)
	}
	won, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(won) < n {
		return nil, fmt.Errorf("cluster: %s in Redis (%s) is not %d bytes of base64; delete the key and restart", name, key, n)
	}
	return won, nil
}
