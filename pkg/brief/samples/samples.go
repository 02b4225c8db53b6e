// Package samples generates a small, fictional litigation record as PDF files,
// for tests and local runs. The matter is Harlow Logistics Ltd v. Penmark
// Freight Inc.: a complaint, an answer, the demand letter exhibited to the
// complaint, and one "scanned" exhibit that has no text layer.
//
// Output is generated at call time and is byte-identical on every call: the
// creation and modification dates are fixed and streams are compressed.
package samples

import (
	"bytes"
	"fmt"
	"time"

	"github.com/go-pdf/fpdf"
)

// File is one generated sample document.
type File struct {
	Name string // file name, e.g. "complaint.pdf"
	Data []byte // the PDF bytes
}

// Names of the generated files, in the order PDFs returns them.
const (
	ComplaintName = "complaint.pdf"
	AnswerName    = "answer.pdf"
	ExhibitAName  = "exhibit-a-demand-letter.pdf"
	ScannedName   = "exhibit-b-scanned-bill-of-lading.pdf"
)

// fixedTime is stamped into every file so that output is reproducible.
var fixedTime = time.Date(2025, time.June, 2, 9, 0, 0, 0, time.UTC)

// PDFs returns the sample documents: complaint, answer, exhibit A, scanned exhibit B.
func PDFs() []File {
	return []File{
		{Name: ComplaintName, Data: render(complaint)},
		{Name: AnswerName, Data: render(answer)},
		{Name: ExhibitAName, Data: render(exhibitA)},
		{Name: ScannedName, Data: render(scanned)},
	}
}

// writer wraps fpdf with the few layout moves the samples need.
type writer struct {
	pdf *fpdf.Fpdf
}

const (
	bodyFont = 11.0
	lineH    = 5.0 // mm; single spacing for an 11pt font
	gap      = 3.0 // mm between blocks, read as a paragraph break
	textW    = 0.0 // 0 = up to the right margin
)

func (w writer) heading(s string) {
	w.pdf.SetFont("Helvetica", "B", bodyFont)
	w.pdf.MultiCell(textW, lineH, s, "", "C", false)
	w.pdf.Ln(gap)
	w.pdf.SetFont("Helvetica", "", bodyFont)
}

func (w writer) para(s string) {
	w.pdf.MultiCell(textW, lineH, s, "", "J", false)
	w.pdf.Ln(gap)
}

// block writes single-spaced lines with no paragraph break between them.
func (w writer) block(lines ...string) {
	for _, l := range lines {
		w.pdf.CellFormat(textW, lineH, l, "", 1, "L", false, 0, "")
	}
	w.pdf.Ln(gap)
}

// indented writes single-spaced lines at a left indent (mm).
func (w writer) indented(indent float64, lines ...string) {
	left, _, _, _ := w.pdf.GetMargins()
	for _, l := range lines {
		w.pdf.SetX(left + indent)
		w.pdf.CellFormat(textW, lineH, l, "", 1, "L", false, 0, "")
	}
}

func (w writer) newPage() {
	w.pdf.AddPage()
	w.pdf.SetFont("Helvetica", "", bodyFont)
}

func render(body func(w writer)) []byte {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCreationDate(fixedTime)
	pdf.SetModificationDate(fixedTime)
	pdf.SetCompression(true)
	pdf.SetCatalogSort(true)
	pdf.SetProducer("brief-rail samples", false)
	pdf.SetMargins(25, 25, 25)
	pdf.SetAutoPageBreak(true, 25)
	w := writer{pdf: pdf}
	w.newPage()
	body(w)
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		// Only reachable through a programming error in this file.
		panic(fmt.Sprintf("samples: render: %v", err))
	}
	return buf.Bytes()
}

func caption(w writer, title string) {
	w.heading("IN THE CIRCUIT COURT OF WESTBRIDGE COUNTY\nCOMMERCIAL DIVISION")
	w.indented(0, "HARLOW LOGISTICS LTD,")
	w.indented(20, "Plaintiff,")
	w.indented(10, "v.")
	w.indented(0, "PENMARK FREIGHT INC.,")
	w.indented(20, "Defendant.")
	w.pdf.Ln(gap)
	w.block("Case No. 2025-CV-01482")
	w.heading(title)
}

func complaint(w writer) {
	w.pdf.SetTitle("Complaint - Harlow Logistics Ltd v. Penmark Freight Inc.", false)
	caption(w, "COMPLAINT FOR BREACH OF CONTRACT")
	w.para(`Plaintiff Harlow Logistics Ltd ("Harlow"), by its attorneys, alleges as follows against Defendant Penmark Freight Inc. ("Penmark").`)
	w.heading("PARTIES")
	w.para("1. Plaintiff Harlow Logistics Ltd is a company incorporated in England and Wales with its principal place of business in Leeds, United Kingdom.")
	w.para("2. Defendant Penmark Freight Inc. is a Delaware corporation with its principal place of business in Newark, New Jersey.")
	w.heading("FACTS")
	w.para(`3. On January 14, 2025, Harlow and Penmark signed a Freight Services Agreement (the "Agreement") under which Penmark agreed to carry Harlow's containers from Newark to Rotterdam within 21 days of each booking.`)
	w.para("4. Harlow booked its first shipment under the Agreement on 3 February 2025 and paid the agreed freight of $61,500 the same day.")
	w.para("5. Harlow booked its second shipment on 2025-02-17 and its third shipment on 03/03/2025.")
	w.newPage()
	w.para("6. Penmark did not deliver the first shipment until April 2, 2025, fifty-eight days after it was booked.")
	w.para("7. On March 28, 2025, Penmark informed Harlow that it would not carry the third shipment at the agreed rate.")
	w.para("8. By letter dated April 10, 2025, counsel for Harlow demanded that Penmark pay $184,500 in damages within fourteen days. A copy of that letter is attached as Exhibit A.")
	w.para("9. Penmark has not paid any part of the amount demanded.")
	w.heading("COUNT I - BREACH OF CONTRACT")
	w.para("10. Penmark breached the Agreement by failing to deliver the first shipment within 21 days and by refusing to carry the third shipment.")
	w.para("11. As a direct result, Harlow has suffered damages of not less than $184,500.")
	w.para("WHEREFORE, Harlow demands judgment against Penmark in the amount of $184,500, together with interest, costs and such further relief as the Court finds just.")
	w.block("Dated: May 6, 2025")
	w.block("Eleanor Voss, Esq.", "Voss & Amberley LLP", "Attorney for Plaintiff Harlow Logistics Ltd")
}

func answer(w writer) {
	w.pdf.SetTitle("Answer - Harlow Logistics Ltd v. Penmark Freight Inc.", false)
	caption(w, "ANSWER AND AFFIRMATIVE DEFENSES")
	w.para(`Defendant Penmark Freight Inc. ("Penmark"), by its attorneys, answers the Complaint of Plaintiff Harlow Logistics Ltd ("Harlow") as follows.`)
	w.para("1. Penmark admits the allegations of paragraph 1 on information and belief.")
	w.para("2. Penmark admits the allegations of paragraph 2.")
	w.para("3. Penmark admits that the parties signed the Agreement on January 14, 2025, and refers to the Agreement for its terms.")
	w.para("4. Penmark admits that Harlow booked shipments on 3 February 2025, 17 February 2025 and 3 March 2025.")
	w.para("5. Penmark denies the allegations of paragraph 6 and states that the first shipment was delayed by the closure of the Port of Rotterdam from February 20, 2025 to March 9, 2025.")
	w.para("6. Penmark admits that on March 28, 2025 it notified Harlow of a fuel surcharge, and denies that it refused to carry the third shipment.")
	w.para("7. Penmark admits that it received the letter dated April 10, 2025, and denies that any amount is owed.")
	w.para("8. Penmark denies the allegations of paragraphs 9 through 11.")
	w.newPage()
	w.heading("AFFIRMATIVE DEFENSES")
	w.para("FIRST DEFENSE: The Complaint fails to state a claim upon which relief can be granted.")
	w.para("SECOND DEFENSE (Force Majeure): Clause 14 of the Agreement excuses delay caused by events beyond Penmark's control, including the port closure that began on 20 February 2025.")
	w.para("THIRD DEFENSE (Failure to Mitigate): Harlow failed to mitigate its damages when it declined, on 2025-04-04, Penmark's offer of alternative carriage through Antwerp.")
	w.para("WHEREFORE, Penmark demands that the Complaint be dismissed with costs.")
	w.block("Dated: June 2, 2025")
	w.block("Marcus Ortell", "Ortell Brandt LLP", "Attorney for Defendant Penmark Freight Inc.")
}

func exhibitA(w writer) {
	w.pdf.SetTitle("Exhibit A - Demand letter of 10 April 2025", false)
	w.heading("EXHIBIT A")
	w.block("VOSS & AMBERLEY LLP", "12 Canal Street, Leeds LS1 4DT, United Kingdom")
	w.block("10 April 2025")
	w.block("BY EMAIL AND COURIER", "Marcus Ortell, Esq.", "Ortell Brandt LLP", "400 Raymond Plaza, Newark, NJ 07102")
	w.para("Re: Harlow Logistics Ltd and Penmark Freight Inc. - Freight Services Agreement dated 14 January 2025")
	w.para("Dear Mr Ortell,")
	w.para("We act for Harlow Logistics Ltd in connection with the Freight Services Agreement signed by our client and your client, Penmark Freight Inc., on 14 January 2025.")
	w.para("Under the Agreement your client undertook to deliver each shipment to Rotterdam within 21 days of booking. The first shipment was booked on 3 February 2025 and was not delivered until 2 April 2025.")
	w.para("On 28 March 2025 your client stated that it would not carry the third shipment at the agreed rate, which is a repudiation of the Agreement.")
	w.para("Our client demands payment of $184,500 within fourteen days of the date of this letter, failing which it will commence proceedings without further notice.")
	w.para("Yours faithfully,")
	w.block("Eleanor Voss", "Voss & Amberley LLP", "Counsel for Harlow Logistics Ltd")
}

// scanned draws a page with shapes only, like an image-only scan: there is no
// text layer to extract.
func scanned(w writer) {
	w.pdf.SetTitle("Exhibit B - Bill of lading (scan)", false)
	w.pdf.SetFillColor(230, 230, 230)
	w.pdf.Rect(20, 20, 170, 257, "F")
	w.pdf.SetDrawColor(60, 60, 60)
	w.pdf.Rect(30, 30, 150, 40, "D")
	for y := 80.0; y < 260; y += 8 {
		w.pdf.Line(30, y, 180, y)
	}
}
