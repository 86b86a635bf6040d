import Foundation
import TestSupport
import Testing

/// What a work is and when it appeared, as citations need them: Crossref's types, the year's
/// source, citation keys made from placeholders (issue 31, items 9–11).
@Suite struct CitationMetadataTests {
    /// Crossref's record of the test DOI, as `type` and `container-title` say.
    static func record(type: String, container: String?, year: Int = 2023) throws -> [UInt8] {
        var root = try #require(try JSONSerialization.jsonObject(with: Data(LookupTests.crossref)) as? [String: Any])
        var message = try #require(root["message"] as? [String: Any])
        message["type"] = type
        message["container-title"] = container.map { [$0] } ?? []
        message["issued"] = ["date-parts": [[year, 6, 1]]]
        root["message"] = message
        return Array(try JSONSerialization.data(withJSONObject: root))
    }

    @Test func eachCrossrefTypeIsCitedAsItsKindInBibTeXRISAndCSL() throws {
        // type, BibTeX entry, the field the venue goes in, RIS TY, CSL type
        let kinds: [(String, String, String, String, String)] = [
            ("proceedings-article", "@inproceedings", "booktitle", "CPAPER", "paper-conference"),
            ("book-chapter", "@incollection", "booktitle", "CHAP", "chapter"),
            ("posted-content", "@misc", "howpublished", "UNPB", "article"),
            ("dissertation", "@phdthesis", "school", "THES", "thesis"),
            ("report", "@techreport", "institution", "RPRT", "report"),
            ("journal-article", "@article", "journal", "JOUR", "article-journal"),
            ("book", "@book", "publisher", "BOOK", "book"),
        ]
        var routes = [String: Route]()
        for (index, kind) in kinds.enumerated() {
            routes["/works/10.5555/kind.\(index)"] = .bytes(
                try Self.record(type: kind.0, container: "Proceedings of Margins 2023"),
                contentType: "application/json")
        }
        let (server, environment) = try LookupTests.services(routes)
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("dated-notes.pdf"))
        for (index, kind) in kinds.enumerated() {
            let looked = try box.margin.run(
                ["meta", "1", "--doi", "10.5555/kind.\(index)", "--lookup"], environment: environment)
            #expect(looked.status == 0, "\(looked)")
            #expect(try MetadataTests.book(box, "1").string("workType") == kind.0)
            let bibtex = try box.ok("cite", "1").stdout
            #expect(bibtex.hasPrefix(kind.1 + "{"), "\(kind.0): \(bibtex)")
            #expect(bibtex.contains("  \(kind.2) = {"), "\(kind.0): \(bibtex)")
            let ris = try box.ok("cite", "1", "--format", "ris").stdout
            #expect(ris.hasPrefix("TY  - \(kind.3)\n"), "\(kind.0): \(ris)")
            let csl = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(try box.ok("cite", "1", "--format", "csl-json").stdout.utf8))
                    as? [[String: Any]])
            #expect(csl.first?.string("type") == kind.4, "\(kind.0): \(csl)")
        }
        // A proceedings paper names its proceedings as the book it is in.
        try box.margin.run(["meta", "1", "--doi", "10.5555/kind.0", "--lookup"], environment: environment)
        #expect(try box.ok("cite", "1").stdout.contains("booktitle = {Proceedings of Margins 2023}"))
        // Typed, the kind is the user's: a lookup keeps off it; an unknown kind is refused.
        try box.ok("meta", "1", "--type", "report")
        try box.margin.run(["meta", "1", "--doi", "10.5555/kind.0", "--lookup"], environment: environment)
        #expect(try MetadataTests.book(box, "1").string("workType") == "report")
        let before = try box.snapshot()
        let bad = try box.fails("meta", "1", "--type", "blog-post")
        #expect(bad.stderr.contains("proceedings-article"), "the kinds are listed: \(bad)")
        #expect(try box.snapshot() == before)
        // The kind travels in a backup.
        let backup = try box.ok("export", "--all", "--format", "json").stdout
        #expect(backup.contains("\"workType\" : \"report\""), "\(backup)")
    }

    @Test func aYearFoundLaterReplacesOneOnlyFromASourceAsGood() throws {
        let (server, environment) = try LookupTests.services()
        defer { server.shutdown() }
        let box = Sandbox()
        // Printed on page 1 (a venue line, the DOI footer) beats the file's creation date (2024).
        try box.ok("add", "-q", Fixtures.pdf("paper-venue.pdf"))
        #expect(try MetadataTests.book(box, "1").int("year") == 2019)
        // Only a creation date: that, until something better comes.
        try box.ok("add", "-q", Fixtures.pdf("dated-notes.pdf"))
        #expect(try MetadataTests.book(box, "2").int("year") == 2024)
        let looked = try box.margin.run(
            ["meta", "2", "--doi", "10.5555/margin.2023.0042", "--lookup"], environment: environment)
        #expect(looked.status == 0, "\(looked)")
        #expect(try MetadataTests.book(box, "2").int("year") == 2023)
        // Reading the PDF again offers its creation year: kept back, and said why.
        let refresh = try #require(try box.ok("meta", "2", "--refresh", "--json").json() as? [String: Any])
        let year = try #require((refresh["changes"] as? [[String: Any]])?.first { $0.string("field") == "year" })
        #expect(year["applied"] as? Bool == false && year.string("reason")?.contains("Crossref") == true, "\(year)")
        #expect(try MetadataTests.book(box, "2").int("year") == 2023)
        let text = try box.ok("meta", "2", "--refresh").stdout
        #expect(text.contains("(kept) year: 2023 → 2024"), "\(text)")
        // Typed beats everything found; a lookup replaces a printed year.
        try box.ok("meta", "1", "--year", "2018")
        try box.ok("meta", "1", "--refresh")
        #expect(try MetadataTests.book(box, "1").int("year") == 2018)
        try box.ok("meta", "--all", "--refresh")
        #expect(try MetadataTests.book(box, "1").int("year") == 2018)
        #expect(try MetadataTests.book(box, "2").int("year") == 2023)
    }

    @Test func aKeyMadeFromPlaceholdersIsMadeAgainWhenRealMetadataArrives() throws {
        let (server, environment) = try LookupTests.services()
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("dated-notes.pdf"))
        #expect(try MetadataTests.book(box, "1").string("citationKey") == "anon2024dated")
        // edit --title --author: the key follows.
        try box.ok("edit", "1", "--title", "Notes on Reading", "--author", "Lea Park")
        #expect(try MetadataTests.book(box, "1").string("citationKey") == "park2024notes")
        // Made from real metadata, it stays (a citing document uses it).
        try box.ok("edit", "1", "--title", "Further Notes")
        try box.ok("meta", "1", "--author", "Lea Park-Rowe")
        #expect(try MetadataTests.book(box, "1").string("citationKey") == "park2024notes")
        // meta --author on a book with only a placeholder author.
        try box.ok("add", "-q", Fixtures.pdf("untitled-notes.pdf"))
        let placeholder = try #require(try MetadataTests.book(box, "2").string("citationKey"))
        #expect(placeholder.hasPrefix("anon"), "\(placeholder)")
        try box.ok("meta", "2", "--author", "Ida Wells")
        #expect(try MetadataTests.book(box, "2").string("citationKey")?.hasPrefix("wells") == true)
        // A lookup's metadata remakes a key made from a file's name and no author.
        try box.ok("add", "-q", Fixtures.pdf("word-export.pdf"))
        let looked = try box.margin.run(
            ["meta", "3", "--doi", "10.5555/margin.2023.0042", "--lookup"], environment: environment)
        #expect(looked.status == 0, "\(looked)")
        #expect(try MetadataTests.book(box, "3").string("citationKey") == "muller2023margins")
        // A key the user chose stays whatever changes.
        try box.ok("add", "-q", Fixtures.pdf("paper-word.pdf"))
        try box.ok("edit", "4", "--author", "")
        try box.ok("meta", "4", "--key", "mine")
        try box.ok("edit", "4", "--author", "Jane Smith")
        #expect(try MetadataTests.book(box, "4").string("citationKey") == "mine")
    }
}

/// A JSON backup keeps when each book was last opened (issue 31, item 25).
@Suite struct BackupOpeningTests {
    @Test func aBackupKeepsWhenABookWasLastOpened() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"))
        try box.ok("text", "1", "--pages", "1")
        let opened = try #require(try MetadataTests.book(box, "1").string("openedAt"))
        let backup = box.folder.path + "/backup.json"
        try box.ok("export", "--all", "--format", "json", "-o", backup)
        // Restored into a new library: the book was opened when it was.
        let other = Sandbox()
        try other.ok("add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"))
        #expect(try MetadataTests.book(other, "1").string("openedAt") == nil)
        try other.ok("import", backup)
        #expect(try MetadataTests.book(other, "1").string("openedAt") == opened)
        #expect(try MetadataTests.book(other, "2").string("openedAt") == nil)
        let recent = try #require(try other.ok("recent", "--json").json() as? [[String: Any]])
        #expect(recent.first?.string("title") == "A Sample Paper")
        // A later opening in the library is not moved back by an older backup.
        try other.ok("text", "1", "--pages", "2")
        let later = try #require(try MetadataTests.book(other, "1").string("openedAt"))
        try other.ok("import", backup)
        #expect(try MetadataTests.book(other, "1").string("openedAt") == later)
        // A fresh library made from the backup alone has it too.
        let fresh = Sandbox()
        try fresh.ok("import", backup)
        #expect(try MetadataTests.book(fresh, "1").string("openedAt") == opened)
    }
}
