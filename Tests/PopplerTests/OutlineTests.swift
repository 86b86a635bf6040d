import Foundation
import MarginCore
import Poppler
import TestSupport
import Testing

/// Outlines and page labels as poppler reads them, checked on a fixture made to have both and
/// against independent readers (MuPDF's `mutool show … outline`, qpdf's page-label tree) on the
/// real-world corpus.
@Suite struct OutlineTests {
    @Test func theFixturesOutlineAndLabels() throws {
        let document = try Document(path: Fixtures.pdf("outlined.pdf"))
        #expect(
            document.outline() == [
                OutlineEntry(title: "Preface", page: 1, level: 1),
                OutlineEntry(title: "1 Introduction", page: 3, level: 1),
                OutlineEntry(title: "1.1 Motivation", page: 3, level: 2),
                OutlineEntry(title: "1.2 Scope", page: 4, level: 2),
                OutlineEntry(title: "2 Method", page: 5, level: 1),
                OutlineEntry(title: "Appendix", page: 6, level: 1),
            ])
        let labels = try (1...document.pageCount).map { try document.page($0).label }
        #expect(labels == ["i", "ii", "1", "2", "3", "A-1"])
    }

    @Test func aPDFWithoutThemHasNone() throws {
        let document = try Document(path: Fixtures.pdf("sample.pdf"))
        #expect(document.outline().isEmpty)
        // Without /PageLabels poppler answers the page number itself.
        #expect(try (1...3).map { try document.page($0).label } == ["1", "2", "3"])
    }

    /// Every corpus PDF's outline: as many entries as mutool lists, at the same levels, going to
    /// the same pages, with the same titles (spacing aside).
    @Test(
        Prerequisite.needs(
            Fixtures.corpus != nil && ReferenceReaders.mutool != nil, "needs ../shared/corpus and mutool (mupdf-tools)")
    )
    func outlinesMatchMuPDFOnTheCorpus() throws {
        var compared = 0
        var pages = 0
        for file in ReferenceReaders.corpusFiles() {
            guard let document = try? Document(path: file) else { continue }
            let expected = try ReferenceReaders.mutoolOutline(file)
            let outline = document.outline()
            #expect(outline.count == expected.count, "\(file)")
            guard outline.count == expected.count else { continue }
            for (entry, reference) in zip(outline, expected) {
                #expect(entry.level == reference.level, "\(file): \(entry) vs \(reference)")
                // A destination whose page object is missing from the file (pages cut out of a
                // larger PDF): poppler says nowhere, mutool page 1. Compared where both know.
                if let page = reference.page, let found = entry.page {
                    #expect(found == page, "\(file): \(entry) vs \(reference)")
                    pages += 1
                }
                #expect(
                    ReferenceReaders.words(entry.title) == ReferenceReaders.words(reference.title),
                    "\(file): \(entry) vs \(reference)")
            }
            if !outline.isEmpty { compared += 1 }
        }
        #expect(compared >= 5, "the corpus has PDFs with outlines")
        #expect(pages >= 150, "entries with pages to compare: \(pages)")
    }

    /// Every corpus PDF with a page-label tree: poppler's label of every page is what the tree
    /// says (qpdf reads the tree).
    @Test(Prerequisite.needs(Fixtures.corpus != nil && ReferenceReaders.qpdf != nil, "needs ../shared/corpus and qpdf"))
    func pageLabelsMatchTheLabelTreeOnTheCorpus() throws {
        var compared = 0
        for file in ReferenceReaders.corpusFiles() {
            guard let document = try? Document(path: file),
                let expected = try ReferenceReaders.qpdfPageLabels(file, pageCount: document.pageCount)
            else { continue }
            for number in 1...document.pageCount {
                let actual = try document.page(number).label ?? ""
                #expect(actual == expected[number - 1], "\(file) page \(number)")
                if actual != expected[number - 1] { break }
            }
            compared += 1
        }
        #expect(compared >= 3, "the corpus has PDFs with page labels")
    }
}
