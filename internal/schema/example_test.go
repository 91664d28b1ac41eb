package schema_test

import (
	"errors"
	"fmt"

	"github.com/switchboard-mcp/switchboard/internal/schema"
)

func ExampleInput() {
	out, err := schema.Input([]byte(`{ "required": ["q"], "properties": {"q": {"type": "string"}} }`), schema.Limits{})
	fmt.Println(string(out), err)

	_, err = schema.Input([]byte(`{"properties":{"q":{"$ref":"https://evil.example/q.json"}}}`), schema.Limits{})
	var e *schema.Error
	if errors.As(err, &e) {
		fmt.Println(e.Reason)
		fmt.Println(e.Detail)
	}
	// Output:
	// {"type":"object","required":["q"],"properties":{"q":{"type":"string"}}} <nil>
	// remote_ref
	// $ref "https://evil.example/q.json" is not a local fragment (at "/properties/q/$ref")
}

func ExampleOutput() {
	out, err := schema.Output(nil, schema.Limits{})
	fmt.Println(out == nil, err)

	out, err = schema.Output([]byte(`{"properties":{"n":{"type":"integer"}}}`), schema.Limits{})
	fmt.Println(string(out), err)
	// Output:
	// true <nil>
	// {"type":"object","properties":{"n":{"type":"integer"}}} <nil>
}
