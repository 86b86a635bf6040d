import Foundation
import TestSupport
import Testing

/// For single words, the pages `margin search` finds are the pages `pdfgrep -i -n WORD` finds
/// over the same files. Margin also folds accents and ligatures and joins words hyphenated at a
/// line end, so for some words it finds more pages (a superset, never fewer).
@Suite struct PdfgrepParityTests {
    /// Words whose hits no accent, ligature or hyphenation changes: the sets must be equal.
    static let equalWords = ["data", "table", "model", "total", "page", "which", "fox", "search"]
    /// Words where folding finds more: Margin's pages must include all of pdfgrep's.
    static let supersetWords = ["result", "number", "figure", "the"]

    func files() -> [String] {
        var files = ["sample.pdf", "second.pdf", "mixed.pdf", "untitled-notes.pdf"].map(Fixtures.pdf)
        if let corpus = Fixtures.corpus {
            let real = corpus + "/real"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: real)) ?? []
            // Right-to-left documents: poppler-glib's page text leaves out some runs that
            // poppler-cpp (pdfgrep) keeps, so they are compared elsewhere. Large files only slow CI.
            files += names.sorted().filter { !$0.contains("right_to_left") }.map { real + "/" + $0 }
                .filter { (fileSize($0) ?? 0) < 1_500_000 }
        } else {
            print("note: ../shared/corpus is absent; comparing on the project's fixtures only")
        }
        return files
    }

    func fileSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
    }

    func pdfgrep(_ word: String, _ files: [String]) throws -> Set<String> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pdfgrep")
        process.arguments = ["-i", "-n", word] + files
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.start()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var pages = Set<String>()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            // file:page:text — file names here contain no colon.
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count >= 2 { pages.insert("\(parts[0]):\(parts[1])") }
        }
        return pages
    }

    @Test func wordHitsMatchPdfgrep() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/pdfgrep") else {
            Issue.record("pdfgrep is missing: make test installs it")
            return
        }
        let files = files()
        let box = Sandbox()
        try box.ok(["add", "--quiet", "--jobs", "2"] + files)
        let books = try box.books()
        var fileOf = [Int: String]()
        for book in books {
            if let id = book.int("id"), let source = (book["sources"] as? [String])?.first {
                fileOf[id] = URL(string: source)?.path
            }
        }
        #expect(books.count == files.count)
        for word in Self.equalWords + Self.supersetWords {
            // As typed (--exact), the pages pdfgrep finds; with the words' other forms, more.
            let result = try box.margin.run(["search", "--json", "--limit", "0", "--exact", word])
            let hits = try #require(try result.json() as? [[String: Any]], "\(result)")
            let stemmed = try #require(
                try box.margin.run(["search", "--json", "--limit", "0", word]).json() as? [[String: Any]])
            let pages = { (hits: [[String: Any]]) in Set(hits.map { "\($0["book"] ?? "")/\($0["page"] ?? "")" }) }
            #expect(pages(stemmed).isSuperset(of: pages(hits)), "\(word): no page lost to stemming")
            let ours = Set(
                hits.compactMap { hit -> String? in
                    guard let book = hit.int("book"), let page = hit.int("page"), let file = fileOf[book] else {
                        return nil
                    }
                    return "\(file):\(page)"
                })
            let theirs = try pdfgrep(word, files)
            if Self.equalWords.contains(word) {
                #expect(
                    ours == theirs,
                    "\(word): only margin \(ours.subtracting(theirs).sorted()), only pdfgrep \(theirs.subtracting(ours).sorted())"
                )
            } else {
                #expect(ours.isSuperset(of: theirs), "\(word): missed \(theirs.subtracting(ours).sorted())")
            }
        }
    }
}
