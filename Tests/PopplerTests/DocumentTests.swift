import Foundation
import MarginCore
import Poppler
import TestSupport
import Testing

@Suite struct DocumentTests {
    @Test func readsMetadataAndPageCount() throws {
        // A user would see the wrong title, author or page count for every added book.
        let document = try Document(path: Fixtures.pdf("sample.pdf"))
        #expect(document.pageCount == 3)
        #expect(document.title == "A Sample Paper")
        #expect(document.author == "Ada Lovelace")
    }

    @Test func missingMetadataIsNil() throws {
        let document = try Document(path: Fixtures.pdf("untitled-notes.pdf"))
        #expect(document.title == nil)
        #expect(document.author == nil)
        #expect(document.pageCount == 1)
    }

    @Test func extractsPageText() throws {
        let document = try Document(path: Fixtures.pdf("sample.pdf"))
        let page = try document.page(2)
        #expect(page.number == 2)
        #expect(page.text.contains("An inverted index maps each word"))
        #expect(!page.text.contains("Zebra"))
        let size = page.size
        #expect(size.width == 612 && size.height == 792)
    }

    /// The extractor's text-only reading equals the text of the reading with boxes, which keeps
    /// one box a scalar; the repairs only add white space to poppler's own text.
    @Test func theTextOnlyReadingIsTheReadingsText() throws {
        var pages = 0
        for name in ["sample.pdf", "layout.pdf", "mixed.pdf", "paper-arxiv.pdf", "prose.pdf", "word-export.pdf"] {
            let document = try Document(path: Fixtures.pdf(name))
            for number in 1...document.pageCount {
                let page = try document.page(number)
                let reading = page.readingText()
                let text = page.readingTextOnly()
                #expect(text == reading.text, "\(name) p. \(number)")
                if let boxes = reading.boxes {
                    #expect(boxes.count == text.unicodeScalars.count, "\(name) p. \(number)")
                    pages += 1
                }
                let visible = { (text: String) in text.unicodeScalars.filter { !$0.properties.isWhitespace } }
                #expect(Array(visible(text)) == Array(visible(page.text)), "\(name) p. \(number)")
            }
        }
        #expect(pages > 5, "pages with a layout were read")
    }

    @Test func pageOutOfRangeSaysTheValidRange() throws {
        let document = try Document(path: Fixtures.pdf("sample.pdf"))
        #expect(throws: PopplerError.pageOutOfRange(page: 4, count: 3)) { try document.page(4) }
        #expect(throws: PopplerError.pageOutOfRange(page: 0, count: 3)) { try document.page(0) }
        #expect(PopplerError.pageOutOfRange(page: 4, count: 3).localizedDescription.contains("1-3"))
    }

    @Test func encryptedNeedsTheRightPassword() throws {
        let path = Fixtures.pdf("encrypted.pdf")
        #expect(throws: PopplerError.passwordRequired) { try Document(path: path) }
        #expect(throws: PopplerError.wrongPassword) { try Document(path: path, password: "nope") }
        let document = try Document(path: path, password: "secret")
        #expect(document.pageCount == 2)
        #expect(try document.page(1).text.contains("Herons"))
    }

    /// A document opened from a mapping of its file reads as one opened by path: the same
    /// pages and text; one that needs a password says so; a file over the limit, or absent, is
    /// not mapped.
    @Test func aMappedFileReadsAsItsPath() throws {
        let sample = Fixtures.pdf("sample.pdf")
        let mapped = try #require(MappedPDF(path: sample, limit: 1 << 20))
        let byPath = try Document(path: sample)
        // Two documents on one mapping, as the extractor's workers share it.
        for document in [try Document(mapped: mapped), try Document(mapped: mapped)] {
            #expect(document.pageCount == byPath.pageCount)
            #expect(document.title == byPath.title)
            for number in 1...byPath.pageCount {
                #expect(try document.page(number).text == byPath.page(number).text)
            }
        }
        let size = try #require(try FileManager.default.attributesOfItem(atPath: sample)[.size] as? Int)
        #expect(MappedPDF(path: sample, limit: size - 1) == nil)
        #expect(MappedPDF(path: "/nonexistent/file.pdf", limit: 1 << 20) == nil)
        let encrypted = try #require(MappedPDF(path: Fixtures.pdf("encrypted.pdf"), limit: 1 << 20))
        #expect(throws: PopplerError.passwordRequired) { try Document(mapped: encrypted) }
        let garbage = try #require(MappedPDF(path: Fixtures.pdf("not-a-pdf.html"), limit: 1 << 20))
        #expect(throws: PopplerError.self) { try Document(mapped: garbage) }
    }

    @Test func garbageIsUnreadableNotACrash() throws {
        #expect(throws: PopplerError.self) { try Document(path: Fixtures.pdf("not-a-pdf.html")) }
        #expect(throws: PopplerError.self) { try Document(path: "/nonexistent/file.pdf") }
    }

    @Test(Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func corpusEncryptedFilesOpenWithTheirPasswords() throws {
        let corpus = try #require(Fixtures.corpus)
        let cases: [(String, String)] = [
            ("broken/pypdf__encrypted-file.pdf", "test"),
            ("broken/pdfminer__aes-256.pdf", "baz"),
            ("broken/enc-R2,V1,U=view,O=master.pdf", "view"),
            ("broken/Gday garçon - open.pdf", "garçon"),
        ]
        for (name, password) in cases {
            let path = corpus + "/" + name
            let document = try Document(path: path, password: password)
            #expect(document.pageCount >= 1, "\(name)")
        }
    }
}
