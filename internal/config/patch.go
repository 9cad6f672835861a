package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Config patches let a deployment keep one base config and add what each
// variant needs on top (Kustomize components add one ConfigMap key each,
// `--config-patch` names them): every patch is a JSON merge patch (RFC
// 7386) applied to the config in order — an object merges key by key, a
// null removes the key, anything else replaces it. Hash-routed and shared
// sessions then compose instead of living in copies that drift apart.

// loadPatched reads the config at path (the embedded default for "") and
// applies the patches in order.
func loadPatched(path string, patches []string) (*Config, error) {
	data, abs, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	for _, p := range patches {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("cannot read config patch %s: %v (check --config-patch)", p, err)}
		}
		var patch any
		if err := json.Unmarshal(b, &patch); err != nil {
			return nil, &Error{Msg: fmt.Sprintf("config patch %s: not valid JSON: %s", p, describeJSONError(b, err))}
		}
		if _, ok := patch.(map[string]any); !ok {
			return nil, &Error{Msg: fmt.Sprintf("config patch %s: must be a JSON object (a merge patch onto the config)", p)}
		}
		if data, err = mergePatch(data, patch); err != nil {
			return nil, &Error{Msg: fmt.Sprintf("config patch %s: %v", p, err)}
		}
	}
	if abs == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, &Error{Msg: "cannot determine the working directory: " + err.Error()}
		}
		return Parse(data, "", wd)
	}
	return Parse(data, abs, filepath.Dir(abs))
}

func readConfig(path string) (data []byte, abs string, err error) {
	if path == "" {
		return Default(), "", nil
	}
	if data, err = os.ReadFile(path); err != nil {
		return nil, "", &Error{Msg: fmt.Sprintf("cannot read config file %s: %v (check --config / TOOLNEXUS_CONFIG)", path, err)}
	}
	if abs, err = filepath.Abs(path); err != nil {
		abs = path
	}
	return data, abs, nil
}

// mergePatch applies an RFC 7386 merge patch to the JSON document doc.
func mergePatch(doc []byte, patch any) ([]byte, error) {
	var target any
	if err := json.Unmarshal(doc, &target); err != nil {
		return nil, fmt.Errorf("the config it patches is not valid JSON: %s", describeJSONError(doc, err))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(mergeValue(target, patch)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func mergeValue(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergeValue(t[k], v)
	}
	return t
}
