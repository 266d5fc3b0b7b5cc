package config

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/fusebox-go/fusebox/executor"
)

// Parse reads a Group from JSON (as UnmarshalJSON does) and returns the
// executor.GroupConfig it describes (as Group.GroupConfig does).
func Parse(data []byte) (executor.GroupConfig, error) {
	var g Group
	if err := decode(data, &g); err != nil {
		return executor.GroupConfig{}, err
	}
	return g.GroupConfig()
}

// Load reads the JSON file at path with Parse; its errors start with the
// path. A file longer than MaxSize is refused unread past the limit.
func Load(path string) (executor.GroupConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return executor.GroupConfig{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return executor.GroupConfig{}, err
	}
	cfg, err := Parse(data)
	if err != nil {
		return executor.GroupConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// UnmarshalJSON reads g from JSON strictly, also where g is part of a
// larger document decoded with encoding/json: keys are matched exactly,
// and unknown keys, duplicate keys, values of the wrong type and malformed
// durations are errors that name the key by its path in the document, such
// as suppliers.payments.invocationTimeout, all of them at once. Keys
// that start with "//" are comments, anywhere; null is the same as a key
// left out.
func (g *Group) UnmarshalJSON(data []byte) error {
	var decoded Group
	if err := decode(data, &decoded); err != nil {
		return err
	}
	*g = decoded
	return nil
}

// The limits of a document, whatever it holds (comments included). A
// configuration needs a few levels and a few KB; a deeper or longer
// document costs memory and time to read, not settings.
const (
	// MaxSize is the longest document, in bytes: 1 MiB, about 10,000
	// suppliers' entries.
	MaxSize = 1 << 20
	// MaxDepth is the deepest nesting of objects and arrays; a
	// configuration uses 4 levels.
	MaxDepth = 32
)

// decode fills v, a pointer to one of this package's types, from JSON.
func decode(data []byte, v any) error {
	if len(data) > MaxSize {
		return fmt.Errorf("config: the document is longer than %d bytes (config.MaxSize)", MaxSize)
	}
	if err := checkDepth(data); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	d := &decoder{dec: json.NewDecoder(bytes.NewReader(data)), data: data}
	d.dec.UseNumber()
	var err error
	switch c := d.peek(); c {
	case '{':
		_, err = d.dec.Token()
		if err == nil {
			err = d.object("", reflect.ValueOf(v).Elem())
		}
	case '[':
		d.bad("", "want an object, got an array")
		err = d.skipValue()
	default:
		var tok json.Token
		if tok, err = d.dec.Token(); err == nil {
			d.bad("", "want an object, got %s", describe(tok))
		}
	}
	if err == nil {
		if _, end := d.dec.Token(); end != io.EOF {
			err = errors.New("unexpected data after the top-level object")
		}
	}
	if err != nil {
		return fmt.Errorf("config: %w", syntaxError(data, err))
	}
	return errors.Join(d.errs...)
}

// decoder walks the JSON tokens and the Go value they fill side by side,
// so that it knows the path of every key; problems with the content are
// collected, and only a syntax error stops it.
type decoder struct {
	dec  *json.Decoder
	data []byte // what dec reads, for peek
	errs []error
}

// peek returns the first byte of the next value (past white space and the
// ':' or ',' before it), 0 at the end of the document.
func (d *decoder) peek() byte {
	for _, c := range d.data[min(int(d.dec.InputOffset()), len(d.data)):] {
		switch c {
		case ' ', '\t', '\r', '\n', ':', ',':
			continue
		}
		return c
	}
	return 0
}

// skipValue reads past the next value without making a token of each of
// its parts: a comment or a refused value costs a scan of its bytes.
func (d *decoder) skipValue() error {
	var raw json.RawMessage
	return d.dec.Decode(&raw)
}

// checkDepth reports nesting deeper than MaxDepth, with its line and
// column, in one pass over data that allocates nothing.
func checkDepth(data []byte) error {
	depth, inString, escaped := 0, false, false
	for i, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("%s: nested deeper than %d levels (config.MaxDepth)", position(data, i), MaxDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// position is the line and column of data[i], both from 1.
func position(data []byte, i int) string {
	before := data[:i]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

func (d *decoder) bad(path, format string, args ...any) {
	if path == "" {
		path = "top level"
	}
	d.errs = append(d.errs, fmt.Errorf("config: %s: "+format, append([]any{path}, args...)...))
}

// value fills v from the next JSON value.
func (d *decoder) value(path string, v reflect.Value) error {
	c := d.peek()
	if c == '[' || c == '{' {
		t := v.Type()
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if c == '[' || (t.Kind() != reflect.Struct && t.Kind() != reflect.Map) {
			what := "an object"
			if c == '[' {
				what = "an array"
			}
			if t.Kind() == reflect.Struct || t.Kind() == reflect.Map {
				d.bad(path, "want an object, got %s", what)
			} else {
				d.bad(path, "want %s, got %s", want(t), what)
			}
			return d.skipValue()
		}
	}
	tok, err := d.dec.Token()
	if err != nil || tok == nil {
		return err // nil: null, left out
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct, reflect.Map:
		if tok != json.Delim('{') {
			d.bad(path, "want an object, got %s", describe(tok))
			return nil // a scalar: nothing to skip
		}
		return d.object(path, v)
	}
	if n, ok := tok.(json.Number); ok && len(n) > maxNumber {
		d.bad(path, "want %s, got a number %d characters long (at most %d)", want(v.Type()), len(n), maxNumber)
		return nil
	}
	// A scalar: encoding/json converts it, and its error gets the path.
	raw, err := json.Marshal(tok)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			d.bad(path, "want %s, got %s%s", want(v.Type()), describe(tok), outOfRange(v.Type(), tok))
		} else {
			d.bad(path, "%v", err) // a Duration's own message
		}
	}
	return nil
}

// maxNumber is the length of the longest number a file may write. No
// setting needs more than about 25 characters; a longer number only costs
// time, as deciding exactly whether it is whole (outOfRange) grows with
// the square of its length: a million digits took seconds. It is not
// repeated in the error either.
const maxNumber = 100

// object fills the struct or map v from the members of a JSON object
// whose '{' has been read.
func (d *decoder) object(path string, v reflect.Value) error {
	if v.Kind() == reflect.Map && v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	seen := map[string]bool{}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string) // the decoder checks that object keys are strings
		p := join(path, key, v.Kind() == reflect.Map)
		switch {
		case strings.HasPrefix(key, "//"):
			err = d.skipValue() // a comment
		case seen[key]:
			d.bad(p, "the key %q appears twice in this object", key)
			err = d.skipValue()
		case v.Kind() == reflect.Map:
			if d.peek() == 'n' {
				_, err = d.dec.Token()
				break // null: left out
			}
			elem := reflect.New(v.Type().Elem()).Elem()
			err = d.value(p, elem)
			v.SetMapIndex(reflect.ValueOf(key), elem)
		default:
			f, ok := field(v.Type(), key)
			if !ok {
				d.bad(p, "%s", unknown(v.Type(), key))
				err = d.skipValue()
				break
			}
			err = d.value(p, v.FieldByIndex(f.Index))
		}
		if err != nil {
			return err
		}
		seen[key] = true
	}
	_, err := d.dec.Token() // '}'
	return err
}

// field finds the struct field whose JSON name is exactly key.
func field(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); jsonName(f) == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// codeOnly are the keys a user may expect from the Go types that a file
// cannot hold, with the reason.
var codeOnly = map[string]string{
	"name":         "a breaker is named after its supplier",
	"classify":     "Breaker.Classify is a func: set it in code",
	"errorKinds":   "Breaker.ErrorKinds match errors with a func: set them in code",
	"onTransition": "OnTransition is a func: set it in code",
	"onBusy":       "OnBusy is a func: set it in code",
	"runner":       "GroupConfig.Runner is code: set it in code",
}

// renamed are the keys an older release read, with the key to write
// instead; a file that still has one is refused rather than half read.
var renamed = map[string]string{
	"workers":      "slots",
	"dependencies": "suppliers",
}

// unknown explains an unknown key of an object of type t.
func unknown(t reflect.Type, key string) string {
	if why, ok := codeOnly[key]; ok {
		return "cannot come from a file: " + why
	}
	if now, ok := renamed[key]; ok {
		if _, has := field(t, now); has {
			return fmt.Sprintf("renamed: write %q instead", now)
		}
	}
	var names []string
	for i := range t.NumField() {
		name := jsonName(t.Field(i))
		if strings.EqualFold(name, key) {
			return fmt.Sprintf("unknown field (did you mean %q?)", name)
		}
		names = append(names, name)
	}
	return "unknown field (known: " + strings.Join(names, ", ") + ")"
}

// join extends a path: suppliers.payments, or
// suppliers["api.example.com:443"] for a map key that would not read as
// one name.
func join(path, key string, isMapKey bool) string {
	switch {
	case isMapKey && (key == "" || strings.ContainsAny(key, ".[]\" ")):
		return fmt.Sprintf("%s[%q]", path, key)
	case path == "":
		return key
	}
	return path + "." + key
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// want says what a value of type t is, in the words of a file.
func want(t reflect.Type) string {
	switch {
	case reflect.PointerTo(t).Implements(textUnmarshaler):
		return `a duration string such as "30s"`
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Float64:
		return "a number"
	}
	return "an integer"
}

// outOfRange explains why a number does not fit a numeric field: it is a
// number of the right kind, only too large.
func outOfRange(t reflect.Type, tok json.Token) string {
	n, ok := tok.(json.Number)
	if !ok {
		return ""
	}
	switch t.Kind() {
	case reflect.Int:
		f, err := strconv.ParseFloat(string(n), 64)
		switch {
		case math.IsInf(f, 0) || math.Abs(f) > 1e19:
			return ", which is out of range"
		case err != nil:
			return "" // too small for a float64: a fraction
		}
		// Exactly, as the file writes it (its exponent is now small: the
		// number is cheap to hold whole): 1e3 and 4.0 are whole numbers,
		// 4.0000000000000000001 is not, whatever a float64 makes of them.
		r, ok := new(big.Rat).SetString(string(n))
		switch {
		case !ok || !r.IsInt():
		case !r.Num().IsInt64():
			return ", which is out of range"
		default:
			// 1e3 or 4.0: a whole number, written as JSON would a float.
			return ", which must be written as a whole number: " + r.Num().String()
		}
	case reflect.Float64:
		return ", which is out of range"
	}
	return ""
}

// describe says what a JSON token is, in the words of a file.
func describe(tok json.Token) string {
	switch tok := tok.(type) {
	case string:
		return fmt.Sprintf("the string %q", tok)
	case json.Number:
		return tok.String()
	case bool:
		return fmt.Sprint(tok)
	case json.Delim:
		if tok == '[' {
			return "an array"
		}
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// syntaxError adds the line and column to a JSON syntax error.
func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
	case errors.Is(err, io.EOF) && len(bytes.TrimSpace(data)) == 0:
		return errors.New("empty document")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("unexpected end of the document")
	default:
		return err
	}
	// A value skipped whole (skipValue) reports an offset from its own
	// start; a scan of the whole document (within the limits: quick)
	// reports it from the document's, counting the offending byte.
	var raw json.RawMessage
	if whole := json.Unmarshal(data, &raw); errors.As(whole, &se) {
		return fmt.Errorf("%s: %w", position(data, min(max(int(se.Offset)-1, 0), len(data))), whole)
	}
	return fmt.Errorf("%s: %w", position(data, min(max(int(se.Offset), 0), len(data))), err)
}
