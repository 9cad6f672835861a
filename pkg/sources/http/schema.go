package http

import "github.com/getkin/kin-openapi/openapi3"

// inline returns a copy of ref with every $ref replaced by the schema it
// points to, so the input schema stands alone: a model's tool list has no
// components section to point into. A schema that contains itself is cut
// at the repeat with an empty (accept anything) schema. OpenAPI 3.0's
// `nullable: true` becomes a "null" entry in `type`, which JSON Schema
// understands; vendor extensions, XML hints, examples and discriminators are
// dropped as noise for a model.
func inline(ref *openapi3.SchemaRef, stack map[*openapi3.Schema]bool) *openapi3.SchemaRef {
	if ref == nil {
		return nil
	}
	s := ref.Value
	if s == nil || stack[s] {
		return &openapi3.SchemaRef{Value: &openapi3.Schema{}}
	}
	stack[s] = true
	defer delete(stack, s)

	c := *s
	c.Extensions, c.Origin, c.XML, c.ExternalDocs, c.Discriminator = nil, nil, nil, nil, nil
	c.Example, c.Examples = nil, nil
	c.Defs = nil // every reference into them is inlined
	c.SchemaDialect, c.SchemaID = "", ""
	if c.Nullable && c.Type != nil && !c.Type.Includes("null") {
		t := append(openapi3.Types{}, *c.Type...)
		t = append(t, "null")
		c.Type = &t
		c.Nullable = false
	}
	c.OneOf = inlineList(c.OneOf, stack)
	c.AnyOf = inlineList(c.AnyOf, stack)
	c.AllOf = inlineList(c.AllOf, stack)
	c.PrefixItems = inlineList(c.PrefixItems, stack)
	c.Not = inline(c.Not, stack)
	c.Items = inline(c.Items, stack)
	c.Contains = inline(c.Contains, stack)
	c.PropertyNames = inline(c.PropertyNames, stack)
	c.If, c.Then, c.Else = inline(c.If, stack), inline(c.Then, stack), inline(c.Else, stack)
	c.Properties = inlineMap(c.Properties, stack)
	c.PatternProperties = inlineMap(c.PatternProperties, stack)
	c.DependentSchemas = inlineMap(c.DependentSchemas, stack)
	c.AdditionalProperties.Schema = inline(c.AdditionalProperties.Schema, stack)
	c.UnevaluatedItems.Schema = inline(c.UnevaluatedItems.Schema, stack)
	c.UnevaluatedProperties.Schema = inline(c.UnevaluatedProperties.Schema, stack)
	return &openapi3.SchemaRef{Value: &c}
}

func inlineList(list openapi3.SchemaRefs, stack map[*openapi3.Schema]bool) openapi3.SchemaRefs {
	if len(list) == 0 {
		return nil
	}
	out := make(openapi3.SchemaRefs, len(list))
	for i, r := range list {
		out[i] = inline(r, stack)
	}
	return out
}

func inlineMap(m openapi3.Schemas, stack map[*openapi3.Schema]bool) openapi3.Schemas {
	if len(m) == 0 {
		return nil
	}
	out := make(openapi3.Schemas, len(m))
	for k, r := range m {
		out[k] = inline(r, stack)
	}
	return out
}
