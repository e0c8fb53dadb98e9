package answer

import (
	"net/netip"
	"strconv"
	"strings"
)

// endsInNumber reports whether a host's last label is a number, as the
// WHATWG URL standard reads it ("ends in a number"): all digits, or 0x
// followed by hex digits. Such a host is an IPv4 address to every URL
// parser and resolver (127.1, 2130706433, 0x7f.1 and 0177.0.0.1 are all
// 127.0.0.1), never a name.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	hex, ok := strings.CutPrefix(last, "0x")
	return ok && strings.Trim(hex, "0123456789abcdef") == ""
}

// parseWHATWGIPv4 reads a host that ends in a number as the IPv4 address
// the WHATWG URL standard makes of it: one to four parts, each decimal,
// octal (a leading 0) or hex (0x), the last filling the bytes the others
// leave. ok is false when it is no address (a part too big, a non-number
// part): such a host is refused.
func parseWHATWGIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// ipv4Number reads one part of a WHATWG IPv4 host: decimal, octal with a
// leading 0, or hex with 0x ("0x" alone is 0).
func ipv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(p, "0x"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	n, err := strconv.ParseUint(p, base, 32)
	if err != nil {
		return 0, false
	}
	return n, true
}
