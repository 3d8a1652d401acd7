package release

import (
	"fmt"
	"strconv"
	"strings"
)

// semver is a parsed semantic version, vMAJOR.MINOR.PATCH[-PRE][+BUILD].
type semver struct {
	num [3]int
	pre []string
}

func parseSemver(v string) (semver, bool) {
	var s semver
	v = strings.TrimPrefix(v, "v")
	v, _, _ = strings.Cut(v, "+")
	v, pre, hasPre := strings.Cut(v, "-")
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return s, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || (len(p) > 1 && p[0] == '0') {
			return s, false
		}
		s.num[i] = n
	}
	if hasPre {
		if pre == "" {
			return s, false
		}
		s.pre = strings.Split(pre, ".")
	}
	return s, true
}

// CompareVersions compares two semantic versions (a leading "v" is
// optional; build metadata is ignored): -1 if a < b, 0 if equal, +1 if
// a > b. Either not being a semantic version is an error.
func CompareVersions(a, b string) (int, error) {
	sa, ok := parseSemver(a)
	if !ok {
		return 0, fmt.Errorf("%q is not a semantic version (vMAJOR.MINOR.PATCH)", a)
	}
	sb, ok := parseSemver(b)
	if !ok {
		return 0, fmt.Errorf("%q is not a semantic version (vMAJOR.MINOR.PATCH)", b)
	}
	for i := range sa.num {
		if c := cmpInt(sa.num[i], sb.num[i]); c != 0 {
			return c, nil
		}
	}
	// A pre-release sorts before its release.
	switch {
	case len(sa.pre) == 0 && len(sb.pre) == 0:
		return 0, nil
	case len(sa.pre) == 0:
		return 1, nil
	case len(sb.pre) == 0:
		return -1, nil
	}
	for i := 0; i < len(sa.pre) && i < len(sb.pre); i++ {
		x, y := sa.pre[i], sb.pre[i]
		nx, errx := strconv.Atoi(x)
		ny, erry := strconv.Atoi(y)
		var c int
		switch {
		case errx == nil && erry == nil:
			c = cmpInt(nx, ny)
		case errx == nil: // numeric identifiers sort first
			c = -1
		case erry == nil:
			c = 1
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c, nil
		}
	}
	return cmpInt(len(sa.pre), len(sb.pre)), nil
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
