package brief

import (
	"regexp"
	"strings"
	"unicode"
)

// Every field of a Brief is untrusted text: it was read out of documents a
// stranger may have written, and with a model builder a model wrote it
// after reading them. Markup and links have no business in a caption, a
// name or a quote of a filing, so a model-supplied field that carries them
// is refused (see verify.go); consumers still escape every field for the
// medium they show it in (docs/brief-schema.md).

var (
	// An HTML or XML tag, comment or entity, ASCII or in the look-alike
	// brackets the prompt fences document text with.
	tagRE    = regexp.MustCompile(`[<‹]\s*[/!?]?\s*[A-Za-z][^<>‹›]*[>›]|[<‹]!--|&(?:#\d+|#x[0-9A-Fa-f]+|[A-Za-z]{2,8});`)
	mdLinkRE = regexp.MustCompile(`!\[|\]\(|\]\[`)
	urlRE    = regexp.MustCompile(`(?i)\b(?:https?|ftps?|file|smb|ssh)://|\b(?:javascript|vbscript)\s*:|\bdata:[a-z]+/|\bmailto:\S|\bwww\d?\.[a-z0-9-]+\.[a-z]|(?:^|[\s(])//[a-z0-9-]+\.[a-z]{2,}`)
)

// hasMarkup reports whether s carries markup, a link or a URL, or control
// and bidirectional-override characters that change how text around them
// is shown.
func hasMarkup(s string) bool {
	if tagRE.MatchString(s) || mdLinkRE.MatchString(s) || urlRE.MatchString(s) {
		return true
	}
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case unicode.IsControl(r):
			return true
		case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f':
			return true
		}
	}
	return false
}

// fenceText makes document text safe to put between the prompt's own tags:
// angle brackets become the look-alike single guillemets, so no page can
// close a <page> or <document> tag or open one. The citation check folds
// them back (fold), so a quote copied from the prompt still matches the
// page.
func fenceText(s string) string {
	if !strings.ContainsAny(s, "<>") {
		return s
	}
	return strings.NewReplacer("<", "‹", ">", "›").Replace(s)
}
