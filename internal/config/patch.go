package config

import (
	"bytes"
	"encoding/json"
	"errors"
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
	base := data
	for _, p := range patches {
		if data, err = applyPatchFile(data, p); err != nil {
			return nil, err
		}
	}
	cfg, err := parseAt(data, abs)
	if err != nil && len(patches) > 0 {
		return nil, blamePatch(err, base, abs, patches)
	}
	return cfg, err
}

// applyPatchFile merges the patch file p onto the config text data.
func applyPatchFile(data []byte, p string) ([]byte, error) {
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
	return data, nil
}

// parseAt parses config text read from abs ("" = the embedded default,
// whose relative paths resolve against the working directory).
func parseAt(data []byte, abs string) (*Config, error) {
	if abs == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, &Error{Msg: "cannot determine the working directory: " + err.Error()}
		}
		return Parse(data, "", wd)
	}
	return Parse(data, abs, filepath.Dir(abs))
}

// blamePatch names the patch that made a valid config invalid: the error
// of the merged config alone named a key but not the file to fix. The
// patches are applied again one at a time (only on this failure path) to
// find the first after which the config fails at the same key.
func blamePatch(err error, base []byte, abs string, patches []string) error {
	var ce *Error
	if !errors.As(err, &ce) {
		return err
	}
	if _, baseErr := parseAt(base, abs); baseErr != nil {
		return err // the config file itself is at fault, whatever the patches do
	}
	data := base
	for _, p := range patches {
		data, _ = applyPatchFile(data, p) // each applied cleanly above
		var pe *Error
		if _, perr := parseAt(data, abs); errors.As(perr, &pe) && pe.Key == ce.Key {
			return &Error{Key: ce.Key, Msg: ce.Msg + " (set by config patch " + p + ")"}
		}
	}
	return err
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
