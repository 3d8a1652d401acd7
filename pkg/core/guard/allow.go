package guard

// docExamples are credentials published in vendors' documentation as
// examples. They are redacted unless Options.AllowDocExamples is set.
var docExamples = []string{
	"AKIAIOSFODNN7EXAMPLE",                     // AWS access key id
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", // AWS secret access key
	"AKIAI44QH8DHBEXAMPLE",                     // AWS access key id
	"je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY", // AWS secret access key
	"sk_test_4eC39HqLyjWDarjtT1zdp7dc",         // Stripe API reference
	"sk_test_BQokikJOvBiI2HlWgH4olfQ2",         // Stripe API reference, older
	// jwt.io's sample token.
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
}

// DocExamples returns the documentation examples that AllowDocExamples
// spares.
func DocExamples() []string { return append([]string(nil), docExamples...) }
