import Foundation
import TestSupport
import Testing

/// What margin finds a PDF to be from its first page and metadata (issue 31, item 12), on the
/// classes of mistakes a real corpus showed, and on the judged set in bench/metadata.
@Suite struct MetadataDetectionTests {
    static func added(_ name: String) throws -> [String: Any] {
        let box = Sandbox()
        let added = try #require(try box.ok("add", "-q", "--json", Fixtures.pdf(name)).json() as? [[String: Any]])
        return try #require(added.first?["book"] as? [String: Any])
    }

    @Test func namesInAGridAreEveryAuthorInPrintedOrderAndMetadataLeftoversAreNot() throws {
        // Fourteen names in columns (as ACM sets them), institutions and e-mails between the rows;
        // the document information holds a login and another document's title.
        let book = try Self.added("paper-acm.pdf")
        #expect(book.string("title") == "Margins at Scale: Annotating a Million Papers")
        #expect(
            book.string("author")
                == "Ann Smith, Bo Jones, Chen Wu, Dana K. Lee, Eli Stone, Fay Moss, Gus Park, Hana Ito, "
                + "Ivan Petrov, Jo Alvarez, Kim Nguyen, Lea Brun, Max Weber, Nia Okafor")
    }

    @Test func aTitleLosesWhatItsPageGluedToItAndSpellsOutLigatures() throws {
        // "29,2Shift Work and the E\u{FB03}cient…" with "Member, IEEE" among the names; the
        // document information's author is an uploader's login.
        let book = try Self.added("paper-glued.pdf")
        #expect(book.string("title") == "Shift Work and the Efficient Reading of Papers")
        #expect(book.string("author") == "Rosa Ortega, Tomas Berg")
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("paper-glued.pdf"))
        let bibtex = try box.ok("cite", "1").stdout
        #expect(bibtex.contains("title = {{Shift Work and the Efficient Reading of Papers}}"), "\(bibtex)")
        #expect(!bibtex.unicodeScalars.contains { (0xFB00...0xFB06).contains($0.value) }, "\(bibtex)")
    }

    /// The judged set (bench/metadata/judged.tsv: what a reader of page 1 gives for the corpus's
    /// paper-like PDFs): at least 90 % of titles and 80 % of author lists exact, as the issue asks.
    @Test(Prerequisite.needs(Fixtures.corpus != nil, "needs ../shared/corpus"))
    func theJudgedSetIsReadAsAReaderReadsIt() throws {
        let result = try runProcess(
            "/usr/bin/env",
            ["python3", Fixtures.root + "/bench/metadata/score.py", "--margin", MarginRunner.binary])
        #expect(result.status == 0, "\(result.stderr)")
        func share(_ field: String) -> Double? {
            guard let line = result.stdout.split(separator: "\n").first(where: { $0.hasPrefix(field + ": ") }),
                let fraction = line.split(separator: " ").dropFirst().first?.split(separator: "/"),
                fraction.count == 2, let right = Double(fraction[0]), let total = Double(fraction[1]), total > 0
            else { return nil }
            return right / total
        }
        #expect((share("title") ?? 0) >= 0.9, "\(result.stdout)")
        #expect((share("authors") ?? 0) >= 0.8, "\(result.stdout)")
        #expect((share("year") ?? 0) >= 0.8, "\(result.stdout)")
    }
}
