// schemagen writes the JSON schemas kubeconform validates the chart's objects with, one file
// per kind and version, named as kubeconform looks them up ({{.ResourceKind}}{{.KindSuffix}}.json:
// deployment-apps-v1.json, kafkatopic-kafka-v1.json):
//
//   - from the OpenAPI v2 document of the Kubernetes API (swagger.json of k8s.io/kubernetes),
//     every definition that names a group, version and kind, its references inlined;
//   - from CustomResourceDefinition YAML files (or such files inside a jar), every served
//     version's openAPIV3Schema.
//
// Objects that list their properties get additionalProperties: false (kubeconform -strict
// then refuses unknown fields), unless the schema says it keeps unknown fields. Kubernetes'
// int-or-string and quantity types accept a string or a number, as the API server does.
//
//	schemagen -out DIR [-openapi swagger.json] [-crd FILE.yaml | -crd JAR!PATH ...]
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	out := flag.String("out", "", "folder the schemas are written to")
	openapi := flag.String("openapi", "", "the Kubernetes OpenAPI v2 document (swagger.json)")
	var crds list
	flag.Var(&crds, "crd", "a CRD YAML file, or JAR!PATH for one inside a jar (repeatable)")
	flag.Parse()
	if *out == "" || (*openapi == "" && len(crds) == 0) {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	n := 0
	if *openapi != "" {
		k, err := fromOpenAPI(*openapi, *out)
		if err != nil {
			fail(fmt.Errorf("%s: %w", *openapi, err))
		}
		n += k
	}
	for _, c := range crds {
		k, err := fromCRD(c, *out)
		if err != nil {
			fail(fmt.Errorf("%s: %w", c, err))
		}
		n += k
	}
	fmt.Printf("schemagen: %d schemas in %s\n", n, *out)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "schemagen: %v\n", err)
	os.Exit(1)
}

type obj = map[string]any

// fileName is kubeconform's name for a kind of an apiVersion (its registry.schemaPath).
func fileName(kind, group, version string) string {
	suffix := "-" + strings.ToLower(version)
	if group != "" {
		suffix = "-" + strings.ToLower(strings.Split(group, ".")[0]) + suffix
	}
	return strings.ToLower(kind) + suffix + ".json"
}

func write(dir, name string, schema obj) error {
	schema["$schema"] = "http://json-schema.org/schema#"
	b, err := json.MarshalIndent(schema, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), b, 0o644)
}

func fromOpenAPI(path, dir string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var doc struct {
		Definitions map[string]obj `json:"definitions"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return 0, err
	}
	names := make([]string, 0, len(doc.Definitions))
	for name := range doc.Definitions {
		names = append(names, name)
	}
	sort.Strings(names)
	n := 0
	for _, name := range names {
		def := doc.Definitions[name]
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk, _ := g.(obj)
			group, _ := gvk["group"].(string)
			version, _ := gvk["version"].(string)
			kind, _ := gvk["kind"].(string)
			if version == "" || kind == "" {
				continue
			}
			s := inline(def, doc.Definitions, map[string]bool{name: true}).(obj)
			strict(s)
			if err := write(dir, fileName(kind, group, version), s); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

const refPrefix = "#/definitions/"

// inline copies v with every $ref replaced by its definition; a reference back into the
// definitions being expanded (a recursive type) becomes an empty schema (anything).
func inline(v any, defs map[string]obj, open map[string]bool) any {
	switch t := v.(type) {
	case obj:
		if ref, ok := t["$ref"].(string); ok && strings.HasPrefix(ref, refPrefix) {
			name := strings.TrimPrefix(ref, refPrefix)
			switch {
			case name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
				return obj{"oneOf": []any{obj{"type": "string"}, obj{"type": "integer"}}}
			case name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
				return obj{"oneOf": []any{obj{"type": "string"}, obj{"type": "number"}}}
			case open[name] || defs[name] == nil:
				return obj{}
			}
			open[name] = true
			defer delete(open, name)
			return inline(defs[name], defs, open)
		}
		c := obj{}
		for k, e := range t {
			c[k] = inline(e, defs, open)
		}
		if c["format"] == "int-or-string" {
			delete(c, "type")
			delete(c, "format")
			c["oneOf"] = []any{obj{"type": "string"}, obj{"type": "integer"}}
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = inline(e, defs, open)
		}
		return c
	}
	return v
}

// strict closes every object schema that lists its properties, and turns the OpenAPI v3
// extensions kubeconform's validator does not know into JSON schema.
func strict(v any) {
	switch t := v.(type) {
	case obj:
		if t["x-kubernetes-int-or-string"] == true {
			delete(t, "type")
			t["anyOf"] = []any{obj{"type": "string"}, obj{"type": "integer"}}
		}
		if t["nullable"] == true {
			if ty, ok := t["type"].(string); ok {
				t["type"] = []any{ty, "null"}
			}
		}
		_, props := t["properties"]
		_, open := t["additionalProperties"]
		if props && !open && t["x-kubernetes-preserve-unknown-fields"] != true {
			t["additionalProperties"] = false
		}
		for _, e := range t {
			strict(e)
		}
	case []any:
		for _, e := range t {
			strict(e)
		}
	}
}

// readCRD reads a file, or PATH inside a jar given as JAR!PATH.
func readCRD(spec string) ([]byte, error) {
	jar, inner, ok := strings.Cut(spec, "!")
	if !ok {
		return os.ReadFile(spec)
	}
	z, err := zip.OpenReader(jar)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	f, err := z.Open(inner)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<20))
}

func fromCRD(spec, dir string) (int, error) {
	b, err := readCRD(spec)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, part := range bytes.Split(b, []byte("\n---")) {
		var crd struct {
			Kind string `json:"kind"`
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Served bool   `json:"served"`
					Schema struct {
						OpenAPIV3Schema obj `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(part, &crd); err != nil {
			return n, err
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			s := v.Schema.OpenAPIV3Schema
			// the API server takes these on every custom resource, listed or not
			if props, ok := s["properties"].(obj); ok {
				for k, def := range map[string]obj{"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}} {
					if props[k] == nil {
						props[k] = def
					}
				}
			}
			strict(s)
			if err := write(dir, fileName(crd.Spec.Names.Kind, crd.Spec.Group, v.Name), s); err != nil {
				return n, err
			}
			n++
		}
	}
	if n == 0 {
		return 0, errors.New("no served version of a CustomResourceDefinition")
	}
	return n, nil
}
