package demo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/server"
)

// Bounds of the slow tool. They keep one call under a minute however it is
// called, so a forgotten call cannot pin a host for long.
const (
	slowDefaultSteps = 5
	slowMaxSteps     = 20
	slowDefaultDelay = 100 * time.Millisecond
	slowMaxDelay     = 2 * time.Second
)

// maxCityLen bounds the weather tool's city so its output stays small.
const maxCityLen = 100

// addTools registers the demo tools. Package server infers each input (and,
// for add and weather, output) schema from the Go types and validates both;
// a handler that returns an ordinary error produces a tool result with
// isError: true, never a JSON-RPC error (go-sdk design.md, §Errors).
func addTools(s *server.Server) {
	server.MustAddTool(s, server.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the given text unchanged.",
		Annotations: readOnly("Echo"),
	}, echo)
	server.MustAddTool(s, server.Tool{
		Name:        "add",
		Title:       "Add two numbers",
		Description: "Adds a and b and returns the sum, as text and as structured content.",
		Annotations: readOnly("Add two numbers"),
	}, add)
	server.MustAddTool(s, server.Tool{
		Name:  "slow",
		Title: "Slow task",
		Description: fmt.Sprintf("Waits delay_ms milliseconds per step for the given number of steps, "+
			"reporting progress after each step when the request carries a progress token. "+
			"Honours cancellation. steps: 1 to %d (default %d); delay_ms: 1 to %d (default %d).",
			slowMaxSteps, slowDefaultSteps, slowMaxDelay.Milliseconds(), slowDefaultDelay.Milliseconds()),
		Annotations: readOnly("Slow task"),
	}, slow)
	server.MustAddTool(s, server.Tool{
		Name:        "image",
		Title:       "Gradient image",
		Description: fmt.Sprintf("Returns a %dx%d PNG colour gradient as image content.", imageSize, imageSize),
		Annotations: readOnly("Gradient image"),
	}, imageTool)
	server.MustAddTool(s, server.Tool{
		Name:  "weather",
		Title: "Weather (made up)",
		Description: "Returns a made-up but deterministic weather report for a city as structured content. " +
			"It does not use the network: the numbers are derived from the city's name.",
		Annotations: readOnly("Weather (made up)"),
	}, weather)
	server.MustAddTool(s, server.Tool{
		Name:        "fail",
		Title:       "Always fail",
		Description: "Always fails with a tool error (isError: true), for testing how a host shows tool errors.",
		Annotations: readOnly("Always fail"),
	}, fail)
}

// readOnly returns the annotations shared by every demo tool: none of them
// changes anything or reaches outside the process.
func readOnly(title string) *mcp.ToolAnnotations {
	openWorld := false
	return &mcp.ToolAnnotations{
		Title:          title,
		ReadOnlyHint:   true,
		IdempotentHint: true,
		OpenWorldHint:  &openWorld,
	}
}

type echoInput struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

func echo(_ context.Context, in echoInput) (server.Content, error) {
	return server.Text(in.Text), nil
}

type addInput struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

type addOutput struct {
	Sum float64 `json:"sum" jsonschema:"a + b"`
}

// add has a declared result, so package server sends it as structured
// content and as its JSON text, as the spec asks of tools with an output
// schema (2025-06-18, server/tools §Structured Content).
func add(_ context.Context, in addInput) (addOutput, error) {
	sum := in.A + in.B
	if math.IsInf(sum, 0) {
		// JSON cannot carry ±Inf; say so instead of failing to marshal.
		return addOutput{}, errors.New("the sum overflows a 64-bit float")
	}
	return addOutput{Sum: sum}, nil
}

type slowInput struct {
	Steps   int `json:"steps,omitempty" jsonschema:"number of steps, 1 to 20; 0 or absent means 5"`
	DelayMS int `json:"delay_ms,omitempty" jsonschema:"milliseconds to wait in each step, 1 to 2000; 0 or absent means 100"`
}

// slow reports progress with
// notifications/progress for the request's progress token, if it has one
// (2025-11-25, basic/utilities/progress), and stops as soon as ctx is
// cancelled: by notifications/cancelled on the legacy protocol, by the HTTP
// request going away on the 2026-07-28 one, or by the session closing.
func slow(ctx context.Context, in slowInput) (server.Content, error) {
	steps, delay := in.Steps, time.Duration(in.DelayMS)*time.Millisecond
	if steps == 0 {
		steps = slowDefaultSteps
	}
	if delay == 0 {
		delay = slowDefaultDelay
	}
	if steps < 1 || steps > slowMaxSteps {
		return nil, fmt.Errorf("steps must be between 1 and %d, got %d", slowMaxSteps, in.Steps)
	}
	if delay < time.Millisecond || delay > slowMaxDelay {
		return nil, fmt.Errorf("delay_ms must be between 1 and %d, got %d", slowMaxDelay.Milliseconds(), in.DelayMS)
	}

	progress := server.ProgressReporter(ctx) // nil without a progress token
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for i := 1; i <= steps; i++ {
		if i > 1 {
			timer.Reset(delay)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cancelled after %d of %d steps: %w", i-1, steps, ctx.Err())
		case <-timer.C:
		}
		if progress != nil {
			// Best effort: a client that cannot take progress still gets
			// the result.
			_ = progress.Report(float64(i), float64(steps), fmt.Sprintf("step %d of %d", i, steps))
		}
	}
	return server.Text(fmt.Sprintf("completed %d steps of %d ms", steps, delay.Milliseconds())), nil
}

type imageInput struct{}

func imageTool(context.Context, imageInput) (server.Content, error) {
	return server.Content{
		&mcp.TextContent{Text: fmt.Sprintf("a %dx%d colour gradient", imageSize, imageSize)},
		&mcp.ImageContent{Data: imagePNG(), MIMEType: "image/png"},
	}, nil
}

type weatherInput struct {
	City  string `json:"city" jsonschema:"the city to report on, e.g. Lisbon"`
	Units string `json:"units,omitempty" jsonschema:"temperature units: celsius (the default) or fahrenheit"`
}

type weatherReport struct {
	City            string  `json:"city" jsonschema:"the city, as given"`
	Temperature     float64 `json:"temperature" jsonschema:"the temperature, in units"`
	Units           string  `json:"units" jsonschema:"celsius or fahrenheit"`
	Conditions      string  `json:"conditions" jsonschema:"one of sunny, cloudy, rain, snow, fog, windy"`
	HumidityPercent int     `json:"humidity_percent" jsonschema:"relative humidity, 0 to 100"`
	WindKPH         int     `json:"wind_kph" jsonschema:"wind speed in km/h"`
}

var conditions = []string{"sunny", "cloudy", "rain", "snow", "fog", "windy"}

// weather derives every number from a hash of the city's name, so the same
// city always gets the same report, on every machine.
func weather(_ context.Context, in weatherInput) (weatherReport, error) {
	city := strings.TrimSpace(in.City)
	if city == "" {
		return weatherReport{}, errors.New("city must not be empty")
	}
	if len(city) > maxCityLen {
		return weatherReport{}, fmt.Errorf("city must be at most %d bytes long", maxCityLen)
	}
	units := strings.ToLower(in.Units)
	if units == "" {
		units = "celsius"
	}
	if units != "celsius" && units != "fahrenheit" {
		return weatherReport{}, fmt.Errorf("units must be celsius or fahrenheit, got %q", in.Units)
	}

	h := fnv.New64a()
	h.Write([]byte(strings.ToLower(city)))
	sum := h.Sum64()
	tenthsC := int(sum%450) - 100 // -10.0 °C to 34.9 °C
	temp := float64(tenthsC) / 10
	if units == "fahrenheit" {
		temp = math.Round(float64(tenthsC)*9/5+320) / 10
	}
	return weatherReport{
		City:            city,
		Temperature:     temp,
		Units:           units,
		Conditions:      conditions[(sum>>16)%uint64(len(conditions))],
		HumidityPercent: 20 + int((sum>>24)%81),
		WindKPH:         int((sum >> 32) % 60),
	}, nil
}

type failInput struct {
	Message string `json:"message,omitempty" jsonschema:"the error message to return; a default is used if absent"`
}

func fail(_ context.Context, in failInput) (server.Content, error) {
	if in.Message != "" {
		return nil, errors.New(in.Message)
	}
	return nil, errors.New("the fail tool always fails: this is a tool error, not a protocol error")
}
