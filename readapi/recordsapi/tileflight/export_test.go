package tileflight

// Waiting is how many callers wait for key's flight (0 with none).
func Waiting[K comparable, V any](g *Group[K, V], key K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f, ok := g.flights[key]; ok {
		return f.waiters
	}
	return 0
}
