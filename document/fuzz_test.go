package document

import (
	"testing"
	"unicode/utf8"
)

// FuzzText feeds arbitrary bytes to every extractor. Whatever the input,
// Text returns (no panic, no hang) and any text is valid UTF-8 within the
// limit.
func FuzzText(f *testing.F) {
	f.Add(uint8(0), []byte("<html><head><title>t</title><script>x</script></head><body><p>a &amp; b<li>c</body>"))
	f.Add(uint8(0), []byte("<template><template><p>x</template></template>y<pre>\n z</pre><td>1<td>2"))
	f.Add(uint8(1), textPDF(helloContent).bytes(""))
	f.Add(uint8(1), textPDF("BT /F1 12 Tf [(a) -300 (b)] TJ 14 TL (c) ' 1 2 (d) \" ET BI ID xx EI").bytes(""))
	f.Add(uint8(1), xrefStreamPDF("object stream", "", nil))
	f.Add(uint8(2), []byte("plain text\r\nwith \xff invalid bytes"))
	f.Add(uint8(3), []byte("%PDF-1.4\n<html>"))
	names := []string{"f.html", "f.pdf", "f.txt", "f"}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		name := names[int(kind)%len(names)]
		text, err := Text(name, data)
		if err == nil && (!utf8.ValidString(text) || len(text) > DefaultMaxTextBytes) {
			t.Fatalf("Text(%s) gave %d bytes, valid UTF-8: %v", name, len(text), utf8.ValidString(text))
		}
	})
}
