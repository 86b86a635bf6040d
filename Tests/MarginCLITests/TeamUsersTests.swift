import Foundation
import TestSupport
import Testing

/// Users of a team library: PostgreSQL roles, each with private annotations that PostgreSQL
/// itself keeps from the others (row-level security), through margin and through psql.
@Suite struct TeamUsersTests {
    /// The library's owner creates it and lets alice and bob in; each works from a machine of
    /// their own (their own cache and key).
    struct Team {
        let admin: String
        let alice: String
        let bob: String
        let aliceURL: String
        let bobURL: String
        let aliceBox = Sandbox()
        let bobBox = Sandbox()

        init() throws {
            admin = try TestCluster.freshDatabase()
            alice = try TestCluster.newRole("alice")
            bob = try TestCluster.newRole("bob")
            aliceURL = TestCluster.url(admin, as: alice)
            bobURL = TestCluster.url(admin, as: bob)
            let owner = Sandbox()
            for (arguments, _) in [(["db", "init"], 0), (["db", "grant", alice], 0), (["db", "grant", bob], 0)] {
                let result = try owner.margin.run(arguments, environment: ["MARGIN_LIBRARY": admin])
                #expect(result.status == 0, "\(arguments): \(result)")
            }
        }

        @discardableResult
        func alice(_ arguments: String...) throws -> RunResult {
            try run(aliceBox, aliceURL, arguments, ok: true)
        }

        @discardableResult
        func alice(_ arguments: [String]) throws -> RunResult { try run(aliceBox, aliceURL, arguments, ok: true) }

        @discardableResult
        func bob(_ arguments: String...) throws -> RunResult { try run(bobBox, bobURL, arguments, ok: true) }

        func bobFails(_ arguments: String...) throws -> RunResult { try run(bobBox, bobURL, arguments, ok: false) }

        private func run(_ box: Sandbox, _ url: String, _ arguments: [String], ok: Bool) throws -> RunResult {
            let result = try box.margin.run(arguments, environment: ["MARGIN_LIBRARY": url])
            if ok {
                #expect(result.status == 0, "\(arguments): \(result)")
            } else {
                #expect(result.status != 0, "\(arguments) should fail: \(result)")
                #expect(result.stderrLines.filter { $0.hasPrefix("error: ") }.count == 1, "\(result)")
            }
            return result
        }
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func privateAnnotationsStayPrivateThroughMarginAndPsql() throws {
        let team = try Team()
        try team.alice("add", "-q", Fixtures.pdf("sample.pdf"))
        let secret = try #require(
            try team.alice(
                "highlight", "add", "1", "--text", "inverted index", "--occurrence", "1", "--note", "mine", "--json"
            ).json()
                as? [[String: Any]]
        ).first
        let secretID = try #require(secret?["id"] as? Int)
        #expect(secret?["author"] as? String == team.alice && secret?["shared"] as? Bool == false)
        let open = try #require(
            try team.alice(
                "highlight", "add", "1", "--text", "quick brown fox", "--occurrence", "1", "--shared", "--json"
            ).json()
                as? [[String: Any]]
        ).first
        let openID = try #require(open?["id"] as? Int)
        try team.alice("memo", "add", "1", "a private memo")
        try team.alice("bookmark", "add", "1", "2", "--label", "private mark")

        // Bob sees none of alice's annotations by default, and only the shared one with --all-users.
        #expect((try team.bob("highlight", "list", "--json").json() as? [Any])?.isEmpty == true)
        let shown = try #require(try team.bob("highlight", "list", "--all-users", "--json").json() as? [[String: Any]])
        #expect(shown.map { $0["id"] as? Int } == [openID])
        #expect(shown.first?["author"] as? String == team.alice)
        #expect((try team.bob("memo", "list", "--all-users", "--json").json() as? [Any])?.isEmpty == true)
        #expect((try team.bob("bookmark", "list", "--all-users", "--json").json() as? [Any])?.isEmpty == true)
        let table = try team.bob("highlight", "list", "--all-users").stdout
        #expect(table.contains("BY") && table.contains("\(team.alice) (shared)"), "\(table)")
        #expect(try team.bob("show", "1").stdout.contains("by \(team.alice)"))
        let everything = try #require(
            try team.bob("annotations", "1", "--all-users", "--json").json() as? [[String: Any]])
        #expect(everything.map { $0["id"] as? Int } == [openID])

        // Bob can't change or remove them, through margin…
        #expect(
            try team.bobFails("highlight", "edit", String(secretID), "--note", "bob was here").stderr.contains(
                "no highlight"))
        let refused = try team.bobFails("highlight", "edit", String(openID), "--note", "bob", "--all-users")
        #expect(refused.stderr.contains("is \(team.alice)'s"), "\(refused)")
        #expect(
            try team.bobFails("highlight", "rm", String(openID), "--all-users").stderr.contains("is \(team.alice)'s"))
        // Without --all-users too: a shared highlight says whose it is (a private one stays unseen).
        let unseen = try team.bobFails("highlight", "edit", String(openID), "--note", "bob")
        #expect(unseen.stderr.contains("is \(team.alice)'s"), "\(unseen)")
        // …nor through psql: PostgreSQL shows him the shared row only and changes nothing.
        let asBob = TestCluster.url(team.bobURL, as: team.bob)
        #expect(try TestCluster.psql(asBob, "SELECT count(*) FROM margin.highlight") == "1")
        #expect(try TestCluster.psql(asBob, "SELECT count(*) FROM margin.memo") == "0")
        #expect(try TestCluster.psql(asBob, "SELECT count(*) FROM margin.bookmark") == "0")
        try TestCluster.psql(asBob, "UPDATE margin.highlight SET note = 'bob', shared = true")
        try TestCluster.psql(asBob, "DELETE FROM margin.highlight")
        #expect(throws: (any Error).self) {
            try TestCluster.psql(
                asBob,
                "INSERT INTO margin.memo (uuid, \"bookId\", text, owner, \"createdAt\", \"updatedAt\") "
                    + "VALUES (gen_random_uuid(), 1, 'forged', '\(team.alice)', now(), now())")
        }
        // Removing the book would remove alice's work: refused, by the database too.
        #expect(try team.bobFails("rm", "1", "--yes").stderr.contains("other users' annotations"))
        try TestCluster.psql(asBob, "DELETE FROM margin.book")
        #expect(try TestCluster.psql(team.admin, "SELECT count(*) FROM margin.book") == "1")

        // Alice's annotations are as she left them.
        let mine = try #require(try team.alice("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(Set(mine.compactMap { $0["id"] as? Int }) == [secretID, openID])
        #expect(mine.first { $0["id"] as? Int == secretID }?["note"] as? String == "mine")
        #expect(mine.first { $0["id"] as? Int == openID }?["note"] is NSNull)
        #expect(
            try TestCluster.psql(team.admin, "SELECT count(*) FROM margin.memo WHERE owner = '\(team.alice)'") == "1")

        // Alice makes the private one shared, then private again.
        try team.alice("highlight", "edit", String(secretID), "--shared")
        #expect(try #require(try team.bob("highlight", "list", "--all-users", "--json").json() as? [Any]).count == 2)
        try team.alice("highlight", "edit", String(secretID), "--private")
        #expect(try #require(try team.bob("highlight", "list", "--all-users", "--json").json() as? [Any]).count == 1)
        // Bob's own highlight on the same text is his, private.
        try team.bob("highlight", "add", "1", "--text", "inverted index", "--occurrence", "1")
        #expect(
            try TestCluster.psql(team.admin, "SELECT count(*) FROM margin.highlight WHERE owner = '\(team.bob)'") == "1"
        )
        #expect(try #require(try team.alice("highlight", "list", "--json").json() as? [Any]).count == 2)
    }

    /// Bob, with his own credentials in psql, tries to change what the team reads: every table,
    /// every kind of write. PostgreSQL refuses each (an error, or no row changed).
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aMemberCannotRewriteWhatTheTeamReadsThroughPsql() throws {
        let team = try Team()
        try team.alice("add", "-q", Fixtures.pdf("sample.pdf"), "--tag", "shared")
        try team.alice("highlight", "add", "1", "--text", "quick brown fox", "--occurrence", "1", "--shared")
        try team.alice("bookmark", "add", "1", "2")
        try team.alice("memo", "add", "1", "--page", "1", "alice's memo")
        try team.bob("add", "-q", Fixtures.pdf("sample.pdf"), "--tag", "mine-too")
        let asBob = team.bobURL
        let snapshot = {
            try [
                "book", "page", "source", "version", "guide", "tag", "file", "file_chunk", "highlight", "memo",
                "bookmark", "reading",
            ].map { table in
                try TestCluster.psql(
                    team.admin,
                    "SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM margin.\(table) t")
            }
        }
        let before = try snapshot()
        // The content's version (what servers keep their reads by): raised by writers' triggers
        // alone, its epoch never changed.
        let epoch = "SELECT count(*) || ' ' || min(epoch) FROM margin.content_version"
        let epochBefore = try TestCluster.psql(team.admin, epoch)
        // Bob reads what the CLI reads.
        for table in ["book", "page", "source", "version", "guide", "tag", "file", "file_chunk"] {
            #expect(Int(try TestCluster.psql(asBob, "SELECT count(*) FROM margin.\(table)")) ?? 0 > 0, "\(table)")
        }
        // Writes that affect no row.
        for sql in [
            "DELETE FROM margin.page", "UPDATE margin.page SET text = 'forged'", "DELETE FROM margin.source",
            "DELETE FROM margin.version", "UPDATE margin.version SET bytes = 1", "DELETE FROM margin.guide",
            "UPDATE margin.guide SET outline = '[]'", "DELETE FROM margin.tag", "UPDATE margin.tag SET name = 'x'",
            "DELETE FROM margin.file", "UPDATE margin.file SET bytes = 1", "DELETE FROM margin.file_chunk",
            "UPDATE margin.file_chunk SET data = 'forged'", "DELETE FROM margin.book",
            "DELETE FROM margin.highlight", "UPDATE margin.memo SET text = 'x'", "DELETE FROM margin.reading",
            "UPDATE margin.content_version SET epoch = 1, version = 0", "DELETE FROM margin.content_version",
        ] {
            _ = try? TestCluster.psql(asBob, sql)
        }
        // Writes that PostgreSQL refuses outright.
        for sql in [
            "UPDATE margin.book SET sha256 = repeat('0', 64)", "UPDATE margin.book SET pages = 1",
            "UPDATE margin.book SET title = 'forged'", "UPDATE margin.book SET \"addedBy\" = current_user",
            "UPDATE margin.source SET url = 'https://attacker.test/other.pdf'",
            "INSERT INTO margin.page (\"bookId\", number, text, norm) VALUES (1, 9, 'forged', 'forged')",
            "INSERT INTO margin.version (uuid, \"bookId\", sha256, bytes, pages, \"addedAt\") VALUES (gen_random_uuid(), 1, repeat('0', 64), 1, 1, now())",
            "INSERT INTO margin.guide (\"bookId\", outline) VALUES (1, '[]')",
            "INSERT INTO margin.file_chunk (sha256, n, data) SELECT sha256, 99, 'forged' FROM margin.file",
            // Bytes stored under a name they don't hash to: refused at commit.
            "INSERT INTO margin.file (sha256, bytes) VALUES (repeat('1', 64), 6); INSERT INTO margin.file_chunk VALUES (repeat('1', 64), 0, 'forged')",
            "INSERT INTO margin.migrations (name) VALUES ('v99')",
            "INSERT INTO margin.content_version (epoch, version) VALUES (1, 0)",
            "TRUNCATE margin.content_version", "SELECT margin.content_changed()",
            // Asked about another role, the function doesn't exist; asked about himself it answers.
            "SELECT margin.annotated_by_others(1, '\(team.alice)')",
        ] {
            #expect(throws: (any Error).self, "\(sql)") { try TestCluster.psql(asBob, sql) }
        }
        #expect(try TestCluster.psql(asBob, "SELECT margin.annotated_by_others(1)") == "t")
        #expect(try snapshot() == before, "nothing changed")
        #expect(try TestCluster.psql(team.admin, epoch) == epochBefore)
        // Through margin, too: the book is alice's to retitle, and its text hers to replace.
        #expect(try team.bobFails("edit", "1", "--title", "forged").stderr.contains("\(team.alice) (who added it)"))
        #expect(try team.bobFails("reindex", "1").stderr.contains("\(team.alice) (who added it)"))
        // Bob's own shared highlight can't carry a colour another member's import would refuse.
        try team.bob("highlight", "add", "1", "--text", "inverted index", "--occurrence", "1", "--shared")
        #expect(throws: (any Error).self) {
            try TestCluster.psql(asBob, "UPDATE margin.highlight SET color = 'url(https://attacker.test/)'")
        }
        #expect(throws: (any Error).self) { try TestCluster.psql(asBob, "UPDATE margin.highlight SET page = 0") }
        #expect(throws: (any Error).self) {
            try TestCluster.psql(asBob, "UPDATE margin.highlight SET rects = '[[1,2]]'")
        }
        let backup = team.aliceBox.folder.path + "/all.json"
        try team.alice("export", "--all", "--all-users", "--format", "json", "-o", backup)
        let restored = Sandbox()
        #expect(try restored.margin.run(["import", backup]).status == 0, "everyone's backup imports")
    }

    /// A PDF read back from the database is checked against its SHA-256: swapped bytes are an
    /// error naming the book, never another document under its name; adding the right PDF
    /// replaces them.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func swappedBytesAreNeverShownAndTheRightPDFReplacesThem() throws {
        let team = try Team()
        try team.alice("add", "-q", Fixtures.pdf("sample.pdf"))
        // What a database edited behind Margin's back holds (the administrator, triggers off).
        let other = Fixtures.bytes(Fixtures.pdf("second.pdf")).map { String(format: "%02x", $0) }.joined()
        try TestCluster.psql(
            team.admin,
            "SET session_replication_role = replica; UPDATE margin.file_chunk SET data = '\\x\(other)'::bytea; "
                + "UPDATE margin.file SET bytes = \(other.count / 2)")
        let refused = try team.bobFails("render", "1", "--page", "1", "-o", team.bobBox.folder.path + "/p.png")
        #expect(
            refused.stderr.contains("'A Sample Paper'") && refused.stderr.contains("does not match its SHA-256"),
            "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: team.bobBox.folder.path + "/p.png"))
        #expect(try team.bobFails("path", "1").stderr.contains("SHA-256"))
        #expect(try team.bobFails("export", "1", "--format", "pdf", "-o", "/dev/null").stderr.contains("SHA-256"))
        // Alice adds the right PDF again: the stored bytes are checked and replaced.
        try team.alice("add", "-q", Fixtures.pdf("sample.pdf"))
        let text = try team.bob("text", "1", "--pages", "1").stdout
        #expect(text.contains("quick brown fox"), "\(text)")
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func booksSayWhoAddedThemAndReadingStateIsEachUsers() throws {
        let team = try Team()
        try team.alice("add", "-q", Fixtures.pdf("sample.pdf"))
        let listed = try #require(try team.bob("list", "--json").json() as? [[String: Any]])
        #expect(listed.first?["addedBy"] as? String == team.alice)
        try team.alice("render", "1", "--page", "1", "-o", team.aliceBox.folder.path + "/p1.png")
        let aliceRecent = try #require(try team.alice("recent", "--json").json() as? [[String: Any]])
        #expect(aliceRecent.count == 1 && aliceRecent.first?["openedAt"] is String)
        #expect((try team.bob("recent", "--json").json() as? [Any])?.isEmpty == true)
        #expect(try #require(try team.bob("list", "--json").json() as? [[String: Any]]).first?["openedAt"] is NSNull)
        #expect(try #require(try team.alice("list", "--json").json() as? [[String: Any]]).first?["openedAt"] is String)
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aPDFPasswordStaysWithTheUserNotInTheDatabase() throws {
        let team = try Team()
        try team.alice("add", "-q", Fixtures.pdf("encrypted.pdf"), "--password", "secret")
        #expect(try TestCluster.psql(team.admin, "SELECT password FROM margin.book") == "local")
        let image = team.aliceBox.folder.path + "/p1.png"
        try team.alice("render", "1", "--page", "1", "-o", image)
        #expect(FileManager.default.fileExists(atPath: image))
        // Bob has the book but not the password until he gives it.
        let refused = try team.bobFails("render", "1", "--page", "1", "-o", team.bobBox.folder.path + "/p1.png")
        #expect(refused.stderr.contains("password is not on this machine"), "\(refused)")
        try team.bob("edit", "1", "--password", "secret")
        try team.bob("render", "1", "--page", "1", "-o", team.bobBox.folder.path + "/p1.png")
        #expect(try TestCluster.psql(team.admin, "SELECT password FROM margin.book") == "local")
        // Copied into a folder library, the password goes with it, sealed as a folder library keeps it.
        let folder = team.aliceBox.folder.path + "/own-copy"
        try team.alice("db", "copy", "--to", folder)
        let own = try team.aliceBox.margin.run(
            ["--library", folder, "render", "1", "--page", "1", "-o", folder + "/p1.png"],
            environment: ["MARGIN_LIBRARY": ""])
        #expect(own.status == 0, "\(own)")
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func grantingNeedsARealRoleAndATeamLibrary() throws {
        let url = try TestCluster.freshDatabase()
        let box = Sandbox()
        let missing = try box.margin.run(["db", "grant", "nobody_here"], environment: ["MARGIN_LIBRARY": url])
        #expect(missing.status != 0 && missing.stderr.contains("no PostgreSQL role 'nobody_here'"), "\(missing)")
        let personal = try box.fails("db", "grant", "alice")
        #expect(personal.stderr.contains("team library"))
    }
}

/// `margin serve` on a team library: the reader's API as the URL's role.
@Suite struct TeamServeTests {
    @Test(
        Prerequisite.needs(
            TestCluster.available && ServeTests.curl, "needs curl and the cluster scripts/with-postgres.sh starts"))
    func theReaderServesATeamLibraryAsItsUser() throws {
        let team = try TeamUsersTests.Team()
        try team.bob("add", "-q", Fixtures.pdf("sample.pdf"))
        let bobs =
            try #require(
                try team.bob("highlight", "add", "1", "--text", "quick brown fox", "--page", "1", "--shared", "--json")
                    .json()
                    as? [[String: Any]]
            ).first?["id"] as? Int
        // Alice's server: her machine never had the PDF; the page comes from the database.
        let server = try RunningServer(team.aliceBox, ["--all-users"], environment: ["MARGIN_LIBRARY": team.aliceURL])
        let (imageStatus, _) = try fetch(server.url + "/api/books/1/pages/1.png?dpi=50")
        #expect(imageStatus == 200, "\(server.url)")
        let (created, body) = try fetch(
            server.url + "/api/books/1/highlights", method: "POST",
            body: #"{"page": 2, "text": "inverted index", "shared": true}"#)
        #expect(created == 201 && body.contains("\"author\":\"\(team.alice)\""), "\(body)")
        let (listed, highlights) = try fetch(server.url + "/api/books/1/highlights")
        #expect(listed == 200 && highlights.contains(team.bob) && highlights.contains(team.alice), "\(highlights)")
        let (refused, error) = try fetch(
            server.url + "/api/highlights/\(bobs ?? 0)", method: "PATCH", body: #"{"note": "alice was here"}"#)
        #expect(refused == 403 && error.contains("only its author"), "\(error)")
        let (searched, hits) = try fetch(server.url + "/api/search?q=zebra")
        #expect(searched == 200 && hits.contains("\"page\":3"), "\(hits)")
        #expect(server.stop().status == 0)
        // Bob sees alice's shared highlight, with her name.
        let seen = try #require(try team.bob("highlight", "list", "--all-users", "--json").json() as? [[String: Any]])
        #expect(Set(seen.compactMap { $0["author"] as? String }) == [team.alice, team.bob])
        #expect(seen.first { $0["id"] as? Int == bobs }?["note"] is NSNull)
    }
}

/// The reader in a browser, for a member of a team (issue 31, item 5): the team's shared
/// annotations shown with who made them, sharing from the page, and no member's local paths.
@Suite struct TeamServeSharingTests {
    @Test(
        Prerequisite.needs(
            TestCluster.available && ServeTests.curl, "needs curl and the cluster scripts/with-postgres.sh starts"))
    func membersSeeWhatTheTeamSharesAndShareFromTheBrowserButNotEachOthersPaths() throws {
        let team = try TeamUsersTests.Team()
        // Bob adds the PDF from a folder of his own machine: a path that says who he is.
        let bobsCopy = team.bobBox.folder.path + "/home-bob-Downloads/sample.pdf"
        try FileManager.default.createDirectory(
            atPath: (bobsCopy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Fixtures.pdf("sample.pdf"), toPath: bobsCopy)
        try team.bob("add", "-q", bobsCopy)
        try team.bob("highlight", "add", "1", "--text", "quick brown fox", "--page", "1", "--shared")
        try team.bob("highlight", "add", "1", "--text", "inverted index", "--page", "2")
        // Bob sees his own path.
        #expect(try team.bob("show", "1", "--json").stdout.contains("home-bob-Downloads"))
        // Alice, without --all-users on her server: the browser asks for everyone's shared ones.
        let server = try RunningServer(team.aliceBox, [], environment: ["MARGIN_LIBRARY": team.aliceURL])
        let (mineOnly, mine) = try fetch(server.url + "/api/books/1/highlights")
        #expect(mineOnly == 200 && mine == "[]", "\(mine)")
        let (allStatus, all) = try fetch(server.url + "/api/books/1/highlights?all-users=1")
        #expect(allStatus == 200 && all.contains("quick brown fox") && !all.contains("inverted index"), "\(all)")
        #expect(all.contains("\"author\":\"\(team.bob)\""), "\(all)")
        // The book page shows the team's shared annotations, by whom, and offers the choice.
        let (pageStatus, page) = try fetch(server.url + "/books/1")
        #expect(pageStatus == 200 && page.contains("quick brown fox") && page.contains(team.bob), "\(page)")
        #expect(!page.contains("inverted index"), "bob's private highlight stays his")
        let (_, onlyMine) = try fetch(server.url + "/books/1?all-users=0")
        #expect(!onlyMine.contains("quick brown fox"), "\(onlyMine)")
        // No member's local path, anywhere alice looks.
        let (_, bookJSON) = try fetch(server.url + "/api/books/1")
        let (_, books) = try fetch(server.url + "/api/books")
        for text in [page, bookJSON, books] { #expect(!text.contains("home-bob-Downloads"), "\(text)") }
        #expect(!(try team.alice("show", "1", "--json").stdout.contains("home-bob-Downloads")))
        let psql = try runProcess(
            "/usr/bin/psql", [team.aliceURL, "-At", "-c", "SELECT count(*) FROM margin.source WHERE url LIKE 'file:%'"])
        #expect(psql.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(psql)")
        // Alice shares a highlight from the reader's page (the API its share button calls).
        let (created, body) = try fetch(
            server.url + "/api/books/1/highlights", method: "POST", body: #"{"page": 3, "text": "Zebra crossings"}"#)
        #expect(created == 201 && body.contains("\"shared\":false"), "\(body)")
        let id = try #require(
            (try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["id"] as? Int)
        let (shared, sharedBody) = try fetch(
            server.url + "/api/highlights/\(id)", method: "PATCH", body: #"{"shared": true}"#)
        #expect(shared == 200 && sharedBody.contains("\"shared\":true"), "\(sharedBody)")
        let (_, reader) = try fetch(server.url + "/books/1/pages/3")
        #expect(reader.contains("data-team-user=\"\(team.alice)\""), "the reader knows it is a team's")
        let (_, script) = try fetch(server.url + "/static/reader.js")
        #expect(script.contains("data-action") && script.contains("\"share\""), "a share control")
        #expect(server.stop().status == 0)
        let seen = try team.bob("highlight", "list", "--all-users", "--json").stdout
        #expect(seen.contains("Zebra crossings"), "\(seen)")
    }

    /// In Chromium: bob's shared highlight is drawn with his name and listed with no buttons
    /// (alice can't edit, recolour, share or remove it); alice shares hers with the button the
    /// reader gives it.
    @Test(
        Prerequisite.needs(
            TestCluster.available && BrowserTests.chromium,
            "needs chromium, chromium-driver, selenium and the cluster (make test installs and starts them)"))
    func aMemberSharesFromTheReaderInChromium() throws {
        let team = try TeamUsersTests.Team()
        try team.bob("add", "-q", Fixtures.pdf("sample.pdf"))
        try team.bob("highlight", "add", "1", "--text", "Zebra crossings", "--page", "3", "--shared")
        try team.alice("highlight", "add", "1", "--text", "only one", "--page", "3")
        let server = try RunningServer(team.aliceBox, [], environment: ["MARGIN_LIBRARY": team.aliceURL])
        defer { _ = server.stop() }
        let (status, output, errors) = try runBrowserScript([
            Fixtures.root + "/Tests/Browser/team_share.py", server.url, "1", "3", "only one",
        ])
        #expect(status == 0, "\(errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(errors)")
        let before = try #require(report["before"] as? [[String: Any]])
        let bobs = try #require(before.first { ($0["text"] as? String)?.contains("Zebra") == true })
        #expect(bobs["by"] as? [String] == ["— \(team.bob)"], "\(bobs)")
        #expect(
            (bobs["share"] as? [String])?.isEmpty == true && bobs["remove"] as? Int == 0 && bobs["edit"] as? Int == 0,
            "none of his is hers to change: \(bobs)")
        // Drawn on the page apart from hers, with his name.
        #expect(report["tags"] as? [String] == [team.bob], "\(report)")
        let hers = try #require(before.first { ($0["text"] as? String)?.contains("only one") == true })
        #expect(
            hers["share"] as? [String] == ["share"] && hers["remove"] as? Int == 1 && hers["edit"] as? Int == 2,
            "\(hers)")
        // Shared: bob sees it now.
        let seen = try team.bob("highlight", "list", "--all-users", "--json").stdout
        #expect(seen.contains("only one"), "\(seen)")
    }
}

/// Two `margin serve` processes on one team library, as behind a load balancer: each sees what
/// the other wrote on its next request, and writes made through both at once are all kept.
@Suite struct TwoServersTests {
    @Test(
        Prerequisite.needs(
            TestCluster.available && ServeTests.curl, "needs curl and the cluster scripts/with-postgres.sh starts"))
    func twoServersShareOneLibrary() throws {
        let team = try TeamUsersTests.Team()
        try team.alice("add", "-q", Fixtures.pdf("sample.pdf"))
        let environment = ["MARGIN_LIBRARY": team.aliceURL]
        let first = try RunningServer(team.aliceBox, [], environment: environment)
        defer { _ = first.stop() }
        let second = try RunningServer(Sandbox(), [], environment: environment)
        defer { _ = second.stop() }
        // One after the other, alternating: written through one, listed through the other at once.
        for index in 0..<6 {
            let (writer, reader) = index % 2 == 0 ? (first, second) : (second, first)
            let (status, body) = try fetch(
                writer.url + "/api/books/1/memos", method: "POST", body: #"{"page": 1, "text": "memo \#(index)"}"#)
            #expect(status == 201, "\(body)")
            let (_, listed) = try fetch(reader.url + "/api/books/1/memos")
            #expect(listed.contains("memo \(index)"), "written through one, not seen through the other: \(listed)")
        }
        // Both at once: 8 clients, 5 memos each, half through each server.
        let answers = Answers()
        DispatchQueue.concurrentPerform(iterations: 8) { client in
            let server = client % 2 == 0 ? first : second
            for index in 0..<5 {
                let answer = try? fetch(
                    server.url + "/api/books/1/memos", method: "POST",
                    body: #"{"page": 2, "text": "client \#(client) memo \#(index)"}"#)
                answers.set("\(client)-\(index)", answer.map { ($0.0, $0.1) })
            }
        }
        var created = 0
        for client in 0..<8 {
            for index in 0..<5 where answers.get("\(client)-\(index)")?.0 == 201 { created += 1 }
        }
        #expect(created == 40, "every write through either server answered 201")
        let memos = try #require(try team.alice("memo", "list", "--json").json() as? [[String: Any]])
        #expect(memos.count == 46, "nothing lost: \(memos.count)")

        // What each server keeps of its searches (the words of a term, the titles of the books
        // hit) follows writes made elsewhere: a book retitled and another added by the command
        // line are found through both on their next search.
        func search(_ server: RunningServer, _ query: String) throws -> [[String: Any]] {
            let (status, body) = try fetch(server.url + "/api/search?q=" + query)
            #expect(status == 200, "\(body)")
            return try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]], "\(body)")
        }
        for server in [first, second] {
            for _ in 0..<2 {
                #expect(try search(server, "marginalia").map { $0["title"] as? String } == ["A Sample Paper"])
                #expect(try search(server, "herons").isEmpty)
            }
        }
        try team.alice("edit", "1", "--title", "Margins Kept")
        try team.alice("add", "-q", Fixtures.pdf("second.pdf"))
        for server in [first, second] {
            #expect(try search(server, "marginalia").map { $0["title"] as? String } == ["Margins Kept"])
            #expect(try search(server, "herons").map { $0["book"] as? Int } == [2])
        }
    }
}

/// A new version of a book others annotated: the administrator's refresh moves every member's
/// highlights, bookmarks and memos (the database's SECURITY DEFINER functions read and place
/// them), each still its owner's and as private as before.
@Suite struct TeamRefreshTests {
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aRefreshMovesEveryMembersAnnotationsEachStillTheirs() throws {
        let team = try TeamUsersTests.Team()
        let server = try TestHTTPServer(routes: [
            "/paper.pdf": .validated(Fixtures.bytes(Fixtures.pdf("sample.pdf")), etag: "\"one\"")
        ])
        defer { server.shutdown() }
        try team.bob("add", "-q", server.url("/paper.pdf"))
        try team.alice("highlight", "add", "1", "--text", "An inverted index", "--page", "2")
        try team.bob("highlight", "add", "1", "--text", "quick brown fox appears", "--page", "2")
        try team.alice("bookmark", "add", "1", "2", "--label", "alice's")
        try team.bob("memo", "add", "1", "--page", "2", "bob's")
        // The new version: a preface first, every page a page later.
        server.setRoute(
            "/paper.pdf",
            .validated(
                Fixtures.bytes(Fixtures.pdf("sample-revised.pdf")), etag: "\"two\"",
                lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        // Bob added it, but alice annotated it too: only the administrator changes it now.
        let refused = try team.bobFails("refresh", "1")
        #expect(refused.stderr.contains("only"), "\(refused)")
        let admin = Sandbox()
        let refreshed = try admin.margin.run(["refresh", "1"], environment: ["MARGIN_LIBRARY": team.admin])
        #expect(refreshed.status == 0, "\(refreshed)")

        // Where the CLI places the same words on the new version.
        let personal = Sandbox()
        try personal.ok("add", Fixtures.pdf("sample-revised.pdf"))
        func placed(_ text: String) throws -> [[Double]]? {
            let made = try personal.ok("highlight", "add", "1", "--text", text, "--page", "3", "--json").json()
            return (made as? [[String: Any]])?.first?["rects"] as? [[Double]]
        }
        for (member, text, other) in [
            ("alice", "An inverted index", "quick brown fox appears"),
            ("bob", "quick brown fox appears", "An inverted index"),
        ] {
            let listed =
                member == "alice"
                ? try team.alice("highlight", "list", "--all-users", "--json")
                : try team.bob("highlight", "list", "--all-users", "--json")
            let seen = try #require(try listed.json() as? [[String: Any]])
            // Theirs, moved to page 3 and placed there as the CLI places it; the other's still unseen.
            #expect(seen.count == 1, "\(member): \(seen)")
            let own = try #require(seen.first)
            #expect(own["text"] as? String == text && own["page"] as? Int == 3, "\(member): \(own)")
            #expect(own["rects"] as? [[Double]] == (try placed(text)), "\(member): \(own)")
            #expect(own["author"] as? String == (member == "alice" ? team.alice : team.bob), "\(own)")
            #expect(own["shared"] as? Bool == false && own["orphaned"] as? Bool != true, "\(own)")
            #expect(!seen.contains { $0["text"] as? String == other }, "\(member) sees the other's: \(seen)")
        }
        let bookmarks = try #require(try team.alice("bookmark", "list", "--json").json() as? [[String: Any]])
        #expect(bookmarks.map { $0["page"] as? Int } == [3] && bookmarks.first?["label"] as? String == "alice's")
        let memos = try #require(try team.bob("memo", "list", "--json").json() as? [[String: Any]])
        #expect(memos.map { $0["page"] as? Int } == [3] && memos.first?["text"] as? String == "bob's")
        #expect(try team.alice("memo", "list", "--all-users", "--json").stdout.contains("bob's") == false)
    }
}

/// PostgreSQL restarted and stopped under `margin serve` and the CLI (Tests/Team/connection_loss.py,
/// on a cluster of its own that scripts/with-postgres.sh starts: the other tests' is untouched).
@Suite struct ConnectionLossTests {
    static let postgres =
        FileManager.default.fileExists(atPath: "/usr/lib/postgresql")
        && ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).contains {
            FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/pg_ctl")
        }

    @Test(Prerequisite.needs(postgres, "needs PostgreSQL's server (make test installs it)"))
    func aRestartOrAnOutageIsSaidAndLosesNothing() throws {
        let (status, output, said) = try runBrowserScript(
            [
                "python3", Fixtures.root + "/Tests/Team/connection_loss.py", MarginRunner.binary,
                Fixtures.root + "/fixtures/pdf",
            ], with: Fixtures.root + "/scripts/with-postgres.sh")
        #expect(status == 0, "\(said)")
        let report = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(said)")
        #expect(report["crashes"] == nil, "\(report)")
        // Under load, through a restart: every request answered (no client gave up after 15 s),
        // each a success or a 503 that says the database can't be reached; every memo
        // acknowledged is stored, and no other; after the restart, everything succeeds.
        #expect(Set(report["statuses"] as? [Int] ?? [0]).isSubset(of: [200, 201, 503]), "\(report)")
        #expect((report["slowest"] as? Double ?? 99) < 15, "\(report)")
        #expect(
            (report["failures_said"] as? [String] ?? []).allSatisfy { $0.contains("library database") }, "\(report)")
        #expect((report["acknowledged"] as? Int ?? 0) > 0, "\(report)")
        #expect(report["acknowledged_stored"] as? Int == report["acknowledged"] as? Int, "\(report)")
        #expect(report["stored"] as? Int == report["acknowledged"] as? Int, "nothing stored unacknowledged: \(report)")
        #expect(Set(report["after_restart"] as? [Int] ?? [0]).isSubset(of: [200, 201]), "\(report)")
        // The database gone: a 503 within the lease's 10 s, saying so; SIGTERM still stops serve.
        let gone = report["gone"] as? [Any] ?? []
        #expect(gone.first as? Int == 503 && (gone.dropFirst().first as? Double ?? 99) <= 12, "\(report)")
        #expect((gone.last as? String)?.contains("can't be reached") == true, "\(report)")
        #expect((report["stopped_in"] as? Double).map { $0 <= 8 } == true, "\(report)")
        // The CLI: one error line with the database away; adds during a restart are whole or absent.
        let away = report["cli_away"] as? [Any] ?? []
        #expect(away.first as? Int == 1 && (away.last as? [String])?.count == 1, "\(report)")
        #expect(
            report["adds_consistent"] as? Bool == true && report["adds_errors_one_line"] as? Bool == true, "\(report)")
    }
}

/// The page words a team library searches with (`page_word`, `word`: migration v11): every page's,
/// as its text changes, written by the library alone, never by a member.
@Suite struct TeamPageWordsTests {
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theWordsFollowEveryPageAndNoMemberWritesThem() throws {
        let team = try TeamUsersTests.Team()
        try team.alice("add", "-q", Fixtures.pdf("sample.pdf"))
        try team.bob("add", "-q", Fixtures.pdf("second.pdf"))
        func admin(_ sql: String) throws -> String { try TestCluster.psql(team.admin, sql) }
        // Every page with a letter or digit has its words, each counted as often as the text has it.
        #expect(
            try admin("SELECT count(DISTINCT page) FROM margin.page_word")
                == admin("SELECT count(*) FROM margin.page WHERE norm ~ '[a-z0-9]'"))
        // What the search relies on: a piece of a word is on a page as often as the page's words
        // holding it hold it, counted in the page's text.
        for piece in ["fox", "index", "the", "ing", "2"] {
            let differing = try admin(
                """
                SELECT count(*) FROM margin.page p WHERE (length(norm) - length(replace(norm, '\(piece)', ''))) / \(piece.count)
                    <> coalesce((SELECT sum(w.count * (length(w.word) - length(replace(w.word, '\(piece)', ''))) / \(piece.count))
                        FROM margin.page_word w WHERE w.page = p.id AND w.word LIKE '%\(piece)%'), 0)
                """)
            #expect(differing == "0", "\(piece)")
        }
        // Beside each word its page's length (v17), which ranking weighs with.
        #expect(
            try admin(
                "SELECT count(*) FROM margin.page_word w JOIN margin.page p ON p.id = w.page WHERE w.length <> p.words")
                == "0")
        let before = try admin("SELECT count(*) || ' ' || sum(count) || ' ' || sum(length) FROM margin.page_word")

        // Bob, through psql: he can neither forge words nor take them away (row-level security).
        for forged in [
            "INSERT INTO margin.word VALUES ('forged')",
            "INSERT INTO margin.page_word SELECT 'forged', id, 1, 1 FROM margin.page LIMIT 1",
        ] {
            #expect(throws: (any Error).self, "\(forged)") { try TestCluster.psql(team.bobURL, forged) }
        }
        try TestCluster.psql(team.bobURL, "DELETE FROM margin.page_word")
        try TestCluster.psql(team.bobURL, "UPDATE margin.page_word SET count = 0")
        try TestCluster.psql(team.bobURL, "UPDATE margin.page_word SET length = 1")
        try TestCluster.psql(team.bobURL, "DELETE FROM margin.word")
        #expect(
            try admin("SELECT count(*) || ' ' || sum(count) || ' ' || sum(length) FROM margin.page_word") == before)
        #expect(try admin("SELECT count(*) FROM margin.word WHERE word = 'fox'") == "1")
        #expect(try team.bob("search", "fox", "--json").stdout.contains("\"book\" : 1"))

        // The text of a page changed (here in psql, by the administrator): its words follow.
        try TestCluster.psql(
            team.admin,
            "UPDATE margin.page SET text = text || ' zyxwvut', norm = norm || ' zyxwvut' WHERE \"bookId\" = 1 AND number = 1"
        )
        let found = try #require(try team.alice("search", "yxwv", "--json").json() as? [[String: Any]])
        #expect(found.map { "\($0["book"] ?? ""):\($0["page"] ?? "")" } == ["1:1"], "\(found)")
        // A removed book's words go with its pages.
        try team.bob("rm", "2", "--yes")
        #expect(
            try admin("SELECT count(*) FROM margin.page_word WHERE page NOT IN (SELECT id FROM margin.page)") == "0")
        #expect(
            try admin("SELECT count(*) FROM margin.page_word") != before.split(separator: " ").first.map(String.init))
    }
}
