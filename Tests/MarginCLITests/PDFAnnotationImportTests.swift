import Foundation
import MarginCore
import Poppler
import TestSupport
import Testing

/// `import-annotations` on real PDFs that other viewers annotated.
@Suite struct PDFAnnotationImportTests {
    /// pdftotext's text inside a rectangle (PDF points, bottom-left origin) on a page.
    func pdftotext(_ file: String, page: Int, rect: [Double], pageHeight: Double) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pdftotext")
        // -r 72: one pixel per point; -x/-y use the top-left origin.
        process.arguments = [
            "-f", String(page), "-l", String(page), "-r", "72",
            "-x", String(Int(rect[0].rounded(.down))), "-y", String(Int((pageHeight - rect[3]).rounded(.down))),
            "-W", String(Int((rect[2] - rect[0]).rounded(.up)) + 1), "-H",
            String(Int((rect[3] - rect[1]).rounded(.up)) + 1),
            file, "-",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.start()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    @Test(Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func highlightTextAgreesWithPdftotext() throws {
        let corpus = try #require(Fixtures.corpus)
        let folder = corpus + "/annotated"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".pdf") }.sorted()
        let box = Sandbox()
        var compared = 0
        var agreeing = 0
        var imported = 0
        for name in files {
            let path = folder + "/" + name
            let added = try box.margin.run(["add", "--json", path])
            guard added.status == 0, let outcome = (try added.json() as? [[String: Any]])?.first,
                let book = (outcome["book"] as? [String: Any])?.int("id")
            else {
                Issue.record("\(name) could not be added: \(added.stderr)")
                continue
            }
            let report = try #require(try box.ok("import-annotations", String(book), "--json").json() as? [String: Any])
            imported += report.int("added") ?? 0
            let again = try #require(try box.ok("import-annotations", String(book), "--json").json() as? [String: Any])
            #expect(again.int("added") == 0, "\(name): a second run adds nothing")
            let document = try Document(path: path)
            let highlights = try #require(
                try box.ok("highlight", "list", String(book), "--json").json() as? [[String: Any]])
            for highlight in highlights {
                guard let page = highlight.int("page"), let rects = highlight["rects"] as? [[Double]],
                    let text = highlight.string("text")
                else { continue }
                let height = try document.page(page).size.height
                // A word hyphenated at a line end is one word, as pdfannots reads it ("regis-\nters").
                let theirs = try rects.map { try pdftotext(path, page: page, rect: $0, pageHeight: height) }
                    .joined(separator: "\n")
                    .replacingOccurrences(of: "(\\p{L})-\\s*\n\\s*(\\p{L})", with: "$1$2", options: .regularExpression)
                let ours = words(text)
                compared += 1
                // Every word margin reports lies under the annotation by pdftotext's account too.
                if !ours.isEmpty && Set(ours).isSubset(of: Set(words(theirs))) {
                    agreeing += 1
                } else {
                    print("\(name) p.\(page): margin \(ours) vs pdftotext \(words(theirs))")
                }
            }
        }
        #expect(imported > 20, "the annotated corpus holds dozens of markups and notes")
        #expect(compared > 10)
        #expect(agreeing * 10 >= compared * 9, "\(agreeing) of \(compared) highlights agree with pdftotext")
    }
}
