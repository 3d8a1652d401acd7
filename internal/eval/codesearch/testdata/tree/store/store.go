package store

// Store keeps values by key.
type Store struct{ m map[string]string }

// Get returns the value stored under key, or "" when there is none.
func (s *Store) Get(key string) string { return s.m[key] }

// Put stores value under key, replacing what Put stored there before.
func (s *Store) Put(key, value string) { s.m[key] = value }

// Len reports how many keys.
func (s *Store) Len() int { return len(s.m) }

// New returns an empty store ready for Put and Get.
func New() *Store { return &Store{m: map[string]string{}} }

// helper is not exported.
func helper() {}

func Undocumented() {}

// Deprecated: use New.
func Make() *Store { return New() }
