import Foundation
import TestSupport
import Testing

/// A Zotero data directory made by `fixtures/make-zotero.py` (Zotero's table and column names,
/// its own ids for types and fields), taken in by `margin import zotero`.
enum ZoteroFixture {
    /// A fresh directory for one test (tests change it), in the test run's folder of them (as
    /// the scans are).
    static func make() throws -> String {
        let folder = NSTemporaryDirectory() + "margin-zotero-\(getpid())/" + UUID().uuidString
        let made = try runProcess("/usr/bin/env", ["python3", Fixtures.root + "/fixtures/make-zotero.py", folder])
        guard made.status == 0 else { throw FixtureError.failed(made.stderr) }
        return folder
    }

    /// What Zotero changes in a later session (see the script).
    static func update(_ folder: String) throws {
        let made = try runProcess(
            "/usr/bin/env", ["python3", Fixtures.root + "/fixtures/make-zotero.py", "--update", folder])
        guard made.status == 0 else { throw FixtureError.failed(made.stderr) }
    }

    enum FixtureError: Error { case failed(String) }

    /// Every file of the directory with its bytes' digest: what must not change.
    static func fingerprint(_ folder: String) throws -> [String: String] {
        var prints = [String: String]()
        let files = FileManager.default.enumerator(atPath: folder)
        while let file = files?.nextObject() as? String {
            var isFolder: ObjCBool = false
            FileManager.default.fileExists(atPath: folder + "/" + file, isDirectory: &isFolder)
            if !isFolder.boolValue {
                prints[file] = try runProcess("/usr/bin/sha256sum", [folder + "/" + file]).stdout
            }
        }
        return prints
    }
}

@Suite struct ZoteroImportTests {
    func report(_ result: RunResult) throws -> [String: Any] {
        try #require(try result.json() as? [String: Any], "\(result)")
    }

    func counts(_ report: [String: Any], _ kind: String) -> [Int] {
        let counts = report[kind] as? [String: Any] ?? [:]
        return ["added", "updated", "unchanged", "conflicts"].map { counts[$0] as? Int ?? -1 }
    }

    @Test func aDryRunSaysWhatWouldComeInAndWhyTheRestWouldNotAndChangesNothing() throws {
        let zotero = try ZoteroFixture.make()
        let before = try ZoteroFixture.fingerprint(zotero)
        let box = Sandbox()
        let dry = try report(box.ok("import", "zotero", zotero, "--dry-run", "--json"))
        #expect(dry["dryRun"] as? Bool == true)
        #expect(counts(dry, "books") == [3, 0, 0, 0])
        #expect(counts(dry, "highlights") == [5, 0, 0, 0])
        #expect(counts(dry, "memos") == [3, 0, 0, 0])
        #expect(counts(dry, "bookmarks") == [0, 0, 0, 0])
        #expect(dry["added"] as? Int == 8, "annotations; books apart")
        let skipped = try #require(dry["skipped"] as? [[String: String]])
        let reasons = Dictionary(skipped.map { ($0["what"] ?? "", $0["why"] ?? "") }, uniquingKeysWith: { a, _ in a })
        #expect(skipped.count == 7, "\(skipped)")
        #expect(reasons.first { $0.key.hasPrefix("attachment ATTRELAT") }?.value.contains("--base-dir") == true)
        #expect(reasons.first { $0.key.hasPrefix("attachment ATTTRASH") }?.value == "in the trash")
        #expect(
            reasons.first { $0.key.hasPrefix("attachment ATTMISSN") }?.value.hasPrefix("its file is missing") == true)
        #expect(reasons.first { $0.key.hasPrefix("attachment ATTHTML1") }?.value == "not a PDF (text/html)")
        #expect(reasons.first { $0.key.hasPrefix("annotation ANNIMAG1 (image)") } != nil)
        #expect(reasons.first { $0.key.hasPrefix("annotation ANNINK01 (ink)") } != nil)
        #expect(reasons.first { $0.key.hasPrefix("note NOTELONE") }?.value == "a standalone note, on no PDF")
        #expect(!FileManager.default.fileExists(atPath: box.home + "/library.sqlite"), "a dry run makes no library")
        #expect(try ZoteroFixture.fingerprint(zotero) == before)
    }

    @Test func aZoteroLibraryComesInDescribedFiledAndAnnotated() throws {
        let zotero = try ZoteroFixture.make()
        let before = try ZoteroFixture.fingerprint(zotero)
        let box = Sandbox()
        let imported = try report(box.ok("import", "zotero", zotero, "--json"))
        #expect(counts(imported, "books") == [3, 0, 0, 0])
        #expect(counts(imported, "highlights") == [5, 0, 0, 0])
        #expect(try ZoteroFixture.fingerprint(zotero) == before, "Zotero's directory is never changed")
        let books = try box.books()
        #expect(
            books.map { $0.string("title") ?? "" } == [
                "A Sample Paper on Marginalia", "Field Notes", "Margins in Two Columns",
            ])
        let paper = try #require(try box.ok("show", "1", "--json").json() as? [String: Any])
        #expect(paper["author"] as? String == "Ada Lovelace, Charles Babbage", "authors, not the editor")
        #expect(paper["year"] as? Int == 2019)
        #expect(paper["doi"] as? String == "10.5555/marginalia.2019")
        #expect(paper["venue"] as? String == "Journal of Margins")
        #expect(paper["publisher"] as? String == "Margin Press")
        #expect(paper["citationKey"] as? String == "lovelace2019margins")
        #expect(paper["folder"] as? String == "Thesis/Chapter 2")
        #expect(paper["tags"] as? [String] == ["history", "reading"])
        let notes = try #require(try box.ok("show", "2", "--json").json() as? [String: Any])
        #expect(notes["citationKey"] as? String == "notes2020field", "from Extra")
        #expect(notes["year"] as? Int == 2020, "from the date as typed")
        #expect(notes["author"] as? String == "River Survey Group")
        let group = try #require(try box.ok("show", "3", "--json").json() as? [String: Any])
        #expect(group["folder"] as? String == "Reading Group/Shared/Methods")
        #expect(group["venue"] as? String == "Proc. Marginalia")

        let highlights = try #require(try box.ok("highlight", "list", "1", "--json").json() as? [[String: Any]])
        let fox = try #require(highlights.first { ($0["text"] as? String)?.hasPrefix("The quick") == true })
        #expect(fox["note"] as? String == "a classic pangram")
        #expect(fox["color"] as? String == "#ff6666")
        #expect(fox["author"] as? String == "Ada")
        #expect(fox["page"] as? Int == 1)
        // The rect Zotero kept is the one placed; margin's own highlight of the words agrees.
        let kept = try #require((fox["rects"] as? [[Double]])?.first)
        let other = Sandbox()
        try other.ok("add", Fixtures.pdf("sample.pdf"))
        try other.ok("highlight", "add", "1", "--text", "The quick brown fox jumps over the lazy dog.", "--page", "1")
        let mine = try #require(try other.ok("highlight", "list", "--json").json() as? [[String: Any]]).first
        let placed = try #require((mine?["rects"] as? [[Double]])?.first)
        for (a, b) in zip(kept, placed) { #expect(abs(a - b) <= 1.5, "\(kept) vs \(placed)") }
        let across = try #require(highlights.first { ($0["text"] as? String)?.hasPrefix("history of notes") == true })
        #expect((across["rects"] as? [[Double]])?.count == 2, "one rect per line")
        #expect(highlights.count == 3, "\(highlights)")

        let memos = try #require(try box.ok("memo", "list", "1", "--json").json() as? [[String: Any]])
        #expect(memos.first { $0["page"] as? Int == 2 }?["text"] as? String == "Check the second page again.")
        #expect(memos.first { $0["page"] as? Int == 3 }?["text"] as? String == "A text box on page three")
        let note = try #require(memos.first { $0["page"] is NSNull || $0["page"] == nil }?["text"] as? String)
        #expect(
            note
                == "# Reading notes\n\nThe fox sentence is a **pangram** — see [this](https://example.org/pangram).\n\n- first point\n- second point",
            "\(note)")
        let grouped = try #require(try box.ok("highlight", "list", "3", "--json").json() as? [[String: Any]])
        #expect(grouped.first?["author"] as? String == "Bob" && grouped.first?["note"] as? String == "group comment")
        // Search finds the books' text: they were indexed as they came in.
        let hits = try #require(try box.ok("search", "herons", "--json").json() as? [[String: Any]])
        #expect(hits.first?["book"] as? Int == 2)
    }

    @Test func aSecondImportAddsOnlyWhatIsNewAndUpdatesWhatZoteroChanged() throws {
        let zotero = try ZoteroFixture.make()
        let box = Sandbox()
        try box.ok("import", "zotero", zotero)
        let again = try report(box.ok("import", "zotero", zotero, "--json"))
        #expect(again["added"] as? Int == 0 && again["updated"] as? Int == 0)
        #expect(counts(again, "books") == [0, 0, 3, 0])
        #expect(counts(again, "highlights") == [0, 0, 5, 0])
        #expect(counts(again, "memos") == [0, 0, 3, 0])
        try ZoteroFixture.update(zotero)
        let dry = try report(box.ok("import", "zotero", zotero, "--dry-run", "--json"))
        #expect(counts(dry, "books") == [0, 1, 2, 0])
        #expect(counts(dry, "highlights") == [1, 1, 4, 1], "the edited one differs and Zotero's is newer")
        #expect(try box.books().first?.string("title") == "A Sample Paper on Marginalia", "a dry run changes nothing")
        let later = try report(box.ok("import", "zotero", zotero, "--json"))
        #expect(counts(later, "books") == [0, 1, 2, 0])
        #expect(counts(later, "highlights") == [1, 1, 4, 1])
        #expect(try box.books().first?.string("title") == "A Sample Paper on Marginalia, Revised")
        let highlights = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(highlights.count == 6, "no duplicates: \(highlights.map { $0["text"] ?? "" })")
        #expect(highlights.contains { $0["note"] as? String == "the pangram everyone knows" })
        // Changed here later than in Zotero: the library's copy stays.
        let fox = try #require(highlights.first { $0["note"] as? String == "the pangram everyone knows" })
        try box.ok("highlight", "edit", "\(fox["id"] as? Int ?? 0)", "--note", "my own note")
        let third = try report(box.ok("import", "zotero", zotero, "--json"))
        #expect(counts(third, "highlights") == [0, 0, 6, 1])
        #expect(counts(third, "books") == [0, 0, 3, 0])
        #expect(
            try (box.ok("highlight", "list", "--json").json() as? [[String: Any]])?.contains {
                $0["note"] as? String == "my own note"
            } == true)
    }

    /// A file linked relative to Zotero's base directory is found with --base-dir.
    @Test func aFileLinkedUnderZoterosBaseDirectoryIsFoundWithIt() throws {
        let zotero = try ZoteroFixture.make()
        let box = Sandbox()
        let imported = try report(
            box.ok("import", "zotero", zotero, "--base-dir", zotero + "/linked", "--json"))
        #expect(counts(imported, "books") == [4, 0, 0, 0])
        #expect(try box.books().contains { $0.string("title") == "Prose for highlighting" })
        #expect((imported["skipped"] as? [Any])?.count == 6)
    }

    @Test func aGroupIsPickedByNameOrId() throws {
        let zotero = try ZoteroFixture.make()
        for pick in ["Reading Group", "4711", "reading group"] {
            let box = Sandbox()
            let imported = try report(box.ok("import", "zotero", zotero, "--group", pick, "--json"))
            #expect(counts(imported, "books") == [1, 0, 0, 0], "\(pick)")
            #expect(try box.books().map { $0.string("folder") } == ["Reading Group/Shared/Methods"])
        }
        let box = Sandbox()
        let refused = try box.fails("import", "zotero", zotero, "--group", "Nobody")
        #expect(refused.stderr.contains("its groups: Reading Group (4711)"), "\(refused)")
    }

    /// A damaged file among Zotero's (not a PDF, cut short) is left out with its reason, before
    /// anything is added; the rest come in, in the dry run as in the import.
    @Test func aBrokenAttachmentIsSkippedWithItsReasonAndTheRestComeIn() throws {
        let zotero = try ZoteroFixture.make()
        try Data("garbage\n".utf8).write(
            to: URL(fileURLWithPath: zotero + "/storage/ATTSAMPL/Lovelace - 2019 - A Sample Paper.pdf"))
        let group = zotero + "/storage/GRPATT01/two-columns.pdf"
        try Data(try Data(contentsOf: URL(fileURLWithPath: group)).prefix(1000)).write(to: URL(fileURLWithPath: group))
        let box = Sandbox()
        for arguments in [["--dry-run", "--json"], ["--json"]] {
            let imported = try report(box.ok(["import", "zotero", zotero] + arguments))
            #expect(counts(imported, "books") == [1, 0, 0, 0], "\(arguments)")
            #expect(counts(imported, "highlights") == [1, 0, 0, 0], "\(arguments)")
            #expect(counts(imported, "memos") == [0, 0, 0, 0], "\(arguments)")
            let skipped = try #require(imported["skipped"] as? [[String: String]])
            let why = Dictionary(skipped.map { ($0["what"] ?? "", $0["why"] ?? "") }, uniquingKeysWith: { a, _ in a })
            #expect(
                why.first { $0.key.hasPrefix("attachment ATTSAMPL") }?.value.hasPrefix("not a PDF: ") == true, "\(why)")
            #expect(
                why.first { $0.key.hasPrefix("attachment ATTSAMPL") }?.value.hasSuffix("(6 annotations with it)")
                    == true)
            #expect(why.first { $0.key.hasPrefix("attachment GRPATT01") }?.value.contains("is truncated") == true)
        }
        #expect(try box.books().map { $0.string("title") ?? "" } == ["Field Notes"])
    }

    /// A failure after some books came in (here a note past what a note may hold, on the last
    /// attachment read): one error line, and the books this import added go again.
    @Test func aFailureHalfwayLeavesTheLibraryAsItWas() throws {
        let zotero = try ZoteroFixture.make()
        let updated = try runProcess(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\n"
                    + "db.execute('UPDATE itemAnnotations SET comment = ? WHERE itemID = 52', ('long note ' * 120000,))\n"
                    + "db.commit()",
                zotero + "/zotero.sqlite",
            ])
        #expect(updated.status == 0, "\(updated.stderr)")
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("prose.pdf"))
        try box.ok("highlight", "add", "1", "--text", "paying customers")
        let before = try box.snapshot()
        let refused = try box.fails("import", "zotero", zotero)
        #expect(refused.stderr.contains("MiB one may hold"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        #expect(try box.snapshot() == before)
    }

    /// Hostile or unusual databases: one error line, nothing imported, Zotero's files as they were.
    @Test func aDamagedNewerOrAbsentDatabaseIsOneErrorAndImportsNothing() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("prose.pdf"))
        let library = try box.snapshot()
        let damaged = try ZoteroFixture.make()
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(
            to: URL(fileURLWithPath: damaged + "/zotero.sqlite"))
        #expect(try box.fails("import", "zotero", damaged).stderr.contains("not a Zotero database"))
        let newer = try ZoteroFixture.make()
        _ = try runProcess(
            "/usr/bin/sqlite3",
            [newer + "/zotero.sqlite", "UPDATE version SET version = 10 WHERE schema = 'compatibility'"])
        let refused = try box.fails("import", "zotero", newer)
        #expect(refused.stderr.contains("made by a newer Zotero"), "\(refused)")
        let partial = try ZoteroFixture.make()
        _ = try runProcess("/usr/bin/sqlite3", [partial + "/zotero.sqlite", "DROP TABLE itemAnnotations"])
        #expect(try box.fails("import", "zotero", partial).stderr.contains("no table itemAnnotations"))
        let emptyFolder = TemporaryFolder()
        let empty = emptyFolder.path
        #expect(try box.fails("import", "zotero", empty).stderr.contains("has no zotero.sqlite"))
        #expect(try box.fails("import", "zotero", empty + "/none").stderr.contains("no such file"))
        #expect(try box.snapshot() == library)
    }

    /// Zotero running: its database locked by a writer. The copy is read; Zotero's file is untouched.
    @Test func aDatabaseLockedByZoteroIsReadFromACopy() throws {
        let zotero = try ZoteroFixture.make()
        let before = try ZoteroFixture.fingerprint(zotero)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = [
            "python3", "-c",
            "import sqlite3, sys, time\n"
                + "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                + "db.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(600)",
            zotero + "/zotero.sqlite",
        ]
        let out = Pipe()
        holder.standardOutput = out
        try holder.run()
        defer {
            // SIGKILL: the test process may hand its children SIGTERM ignored.
            kill(holder.processIdentifier, SIGKILL)
            holder.waitUntilExit()
        }
        _ = out.fileHandleForReading.availableData  // "locked"
        let box = Sandbox()
        let imported = try report(box.ok("import", "zotero", zotero, "--json"))
        #expect(counts(imported, "books") == [3, 0, 0, 0])
        #expect(try ZoteroFixture.fingerprint(zotero) == before)
    }

    /// A team library takes in the same, as the importing member's.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTeamLibraryTakesInTheSame() throws {
        let zotero = try ZoteroFixture.make()
        let team = try TeamUsersTests.Team()
        let imported = try report(team.alice("import", "zotero", zotero, "--json"))
        #expect(counts(imported, "books") == [3, 0, 0, 0])
        #expect(counts(imported, "highlights") == [5, 0, 0, 0])
        #expect(counts(imported, "memos") == [3, 0, 0, 0])
        let again = try report(team.alice("import", "zotero", zotero, "--json"))
        #expect(again["added"] as? Int == 0)
        let highlights = try #require(try team.alice("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(highlights.count == 5)
        let seenByBob = try #require(try team.bob("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(seenByBob.isEmpty, "alice's imported highlights are hers (private)")
    }
}
