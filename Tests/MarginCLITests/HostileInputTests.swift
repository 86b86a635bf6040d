import Foundation
import TestSupport
import Testing

/// Every real-world and broken PDF in the shared corpus goes through add, text, search and the
/// rendering of its first and last page: each works or gives one clear error, within a time
/// limit, with no crash and nothing half-added.
@Suite struct HostileInputTests {
    static let limit = 120.0

    func check(_ result: RunResult, _ what: String) {
        #expect(result.status != 9 && result.status < 128, "\(what) crashed or hung: \(result)")
        if result.status != 0 {
            #expect(result.stderr.hasPrefix("error: "), "\(what): \(result)")
        }
    }

    func exercise(folder: String) throws -> (tried: Int, added: Int) {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".pdf") }.sorted()
        let box = Sandbox()
        var added = 0
        for name in names {
            let path = folder + "/" + name
            let result = try box.margin.run(["add", "--json", path], timeout: Self.limit)
            check(result, "add \(name)")
            guard result.status == 0, let outcome = (try? result.json() as? [[String: Any]])?.first,
                let book = outcome["book"] as? [String: Any], let id = book.int("id"), let pages = book.int("pages")
            else {
                // Nothing half-added: no book, no stray files.
                #expect(box.folder.files().filter { $0.contains("cache/tmp/") }.isEmpty, "\(name) left temporary files")
                continue
            }
            added += 1
            for page in Set([1, pages]) {
                check(
                    try box.margin.run(["text", String(id), "--pages", String(page)], timeout: Self.limit),
                    "text \(name) p.\(page)")
                let png = box.folder.path + "/render.png"
                check(
                    try box.margin.run(
                        ["render", String(id), "--page", String(page), "--dpi", "30", "-o", png, "--force"],
                        timeout: Self.limit), "render \(name) p.\(page)")
            }
            check(try box.margin.run(["search", "the", "--book", String(id)], timeout: Self.limit), "search \(name)")
        }
        let status = try box.margin.run(["db", "check"])
        #expect(status.status == 0, "the library is intact: \(status)")
        let count = (try box.books()).count
        #expect(count == added, "exactly the PDFs that could be added are in the library")
        return (names.count, added)
    }

    @Test(Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func brokenPDFs() throws {
        let corpus = try #require(Fixtures.corpus)
        let (tried, added) = try exercise(folder: corpus + "/broken")
        print("hostile: \(tried) broken PDFs tried, \(added) added")
        #expect(tried > 50)
    }

    @Test(Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func realPDFs() throws {
        let corpus = try #require(Fixtures.corpus)
        let (tried, added) = try exercise(folder: corpus + "/real")
        print("hostile: \(tried) real PDFs tried, \(added) added")
        #expect(added == tried, "every real-world PDF is added")
    }

    @Test(Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func encryptedCorpusFilesAddWithTheirPasswords() throws {
        let corpus = try #require(Fixtures.corpus)
        let box = Sandbox()
        for (name, password) in [
            ("pypdf__encrypted-file.pdf", "test"), ("pdfminer__rc4-40.pdf", "baz"),
            ("qpdf__encrypted-40-bit-R3.pdf", "623"),
        ] {
            let path = corpus + "/broken/" + name
            check(try box.margin.run(["add", path, "--password", "wrong"]), "wrong password \(name)")
            #expect(try box.margin.run(["add", path, "--password", password]).status == 0, "\(name)")
        }
        #expect(try box.books().count == 3)
        check(try box.margin.run(["text", "1"]), "text of an encrypted book")
    }
}
