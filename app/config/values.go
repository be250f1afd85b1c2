package config

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// origin names key with the environment variable it was read from, when
// that variable is set: a value that does not parse is then found where
// it was written.
func origin(key string) string {
	env := envName(key)
	if _, ok := os.LookupEnv(env); ok {
		return key + " (from " + env + ")"
	}
	return key
}

func containsKey(list []string, k string) bool {
	for _, s := range list {
		if s == k {
			return true
		}
	}
	return false
}

func yamlUnmarshal(raw []byte, out *map[string]any) error { return yaml.Unmarshal(raw, out) }

// getInt reads an integer key; strings (from the environment) must be
// decimal integers, YAML numbers must be whole.
func getInt(v *viper.Viper, key string) (int, error) {
	switch x := v.Get(key).(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case float64:
		if x != float64(int(x)) {
			return 0, fmt.Errorf("%s: %v is not a whole number", key, x)
		}
		return int(x), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, fmt.Errorf("%s: %q is not an integer", origin(key), x)
		}
		return n, nil
	default:
		return 0, fmt.Errorf("%s: %v is not an integer", key, x)
	}
}

// getBool reads a boolean key; strings accept what strconv.ParseBool does.
func getBool(v *viper.Viper, key string) (bool, error) {
	switch x := v.Get(key).(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err != nil {
			return false, fmt.Errorf("%s: %q is not a boolean (true or false)", origin(key), x)
		}
		return b, nil
	default:
		return false, fmt.Errorf("%s: %v is not a boolean", key, x)
	}
}

// getString reads a string key.
func getString(v *viper.Viper, key string) (string, error) {
	switch x := v.Get(key).(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case int, int64, float64, bool:
		return fmt.Sprint(x), nil
	default:
		return "", fmt.Errorf("%s: %v is not a string", key, x)
	}
}

// getStrings reads a list from a flag (slice), an env var or YAML
// (comma-separated string or sequence).
func getStrings(v *viper.Viper, key string) ([]string, error) {
	var parts []string
	switch x := v.Get(key).(type) {
	case nil:
		return nil, nil
	case []string:
		parts = x
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s: %v is not a string", key, e)
			}
			parts = append(parts, s)
		}
	case string:
		// pflag's StringSlice reaches viper as "[a,b]" when unchanged.
		parts = strings.Split(strings.Trim(x, "[]"), ",")
	default:
		return nil, fmt.Errorf("%s: %v is not a list", key, x)
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out, nil
}
