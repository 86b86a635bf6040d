import Foundation
import MarginCore
import Testing

/// What every library store must do, whatever its backend: each check gets an empty store,
/// migrated to the latest schema, and fails through Swift Testing's expectations. A backend's
/// test target runs every check (`StoreConformance.names`) against its own store.
public enum StoreConformance {
    public typealias Check = @Sendable (any LibraryStore) async throws -> Void

    public static let checks: [(name: String, check: Check)] = [
        ("insert assigns ids and fetches back", insertAssignsIdsAndFetchesBack),
        ("filters, sorts and pages", filtersSortsAndPages),
        ("upsert updates by natural key, else inserts", upsertUpdatesByNaturalKeyElseInserts),
        ("a failing write changes nothing", aFailingWriteChangesNothing),
        ("deleting a book cascades", deletingABookCascades),
        ("foreign keys are enforced", foreignKeysAreEnforced),
        ("a duplicate SHA-256 is rejected", duplicateShaIsRejected),
        ("every field round-trips", everyFieldRoundTrips),
        ("who made a row, sharing and opening are kept", whoMadeARowIsKept),
        ("the page index finds folded terms", thePageIndexFindsFoldedTerms),
        ("the page index finds pieces of words and phrases, and follows changes", thePageIndexFindsPiecesAndFollows),
        ("the annotation index follows saves and deletes", theAnnotationIndexFollowsSavesAndDeletes),
        ("addBook saves a book once by its SHA-256", addBookSavesABookOnce),
        ("removeBooks removes annotated books only when confirmed", removeBooksNeedsConfirmation),
        ("addVersion serves a version and moves what is on its pages", addVersionServesAVersion),
        ("annotations are added, changed and removed by id", annotationTransactions),
        ("importBackup merges by UUID, the newer wins, a dry run changes nothing", importBackupMerges),
        ("reads sent ahead answer as made, and never from before a write", readsSentAheadAnswerAsMade),
        ("what a search reads of its books is what the reads it stands for say", searchedBooksAreTheirReads),
    ]

    public static var names: [String] { checks.map(\.name) }

    /// Runs the check called `name` on `store`.
    public static func run(_ name: String, on store: any LibraryStore) async throws {
        let check = try #require(checks.first { $0.name == name }?.check, "no conformance check named \(name)")
        try await check(store)
    }

    static func makeBook(
        _ store: any LibraryStore, _ title: String, sha: String, author: String? = nil, folder: String? = nil
    ) async throws -> Book {
        try await store.repository.write { writer in
            var book = Book(sha256: sha, title: title, author: author, pages: 3, bytes: 10, folder: folder)
            try writer.insert(&book)
            return book
        }
    }

    static func sha(_ character: Character) -> String { String(repeating: character, count: 64) }

    /// `sendAhead`: the reads it sends answer as they do when made without it (the same rows,
    /// counts, twice the same read, a read sent ahead but never made, a read whose arguments
    /// differ from the one sent); in a write, a read made after a write sees the write.
    static func readsSentAheadAnswerAsMade(_ store: any LibraryStore) async throws {
        for (title, letter) in [("Dune", "a"), ("Emma", "b"), ("Ulysses", "c")] {
            _ = try await makeBook(store, title, sha: sha(Character(letter)), folder: "shelf")
        }
        let all = Query<Book>().sorted(by: Book.Fields.title.ascending)
        let shelf = Query<Book>().filter(Book.Fields.folder == "shelf")
        let plain = try await store.repository.read { reader in
            (try reader.fetch(all).map(\.title), try reader.count(shelf), try reader.fetch(all.limit(1)).map(\.title))
        }
        #expect(plain.0 == ["Dune", "Emma", "Ulysses"] && plain.1 == 3 && plain.2 == ["Dune"])
        let ahead = try await store.repository.read { reader in
            try reader.sendAhead { ahead in
                #expect(try ahead.fetch(all).count <= 3)
                _ = try ahead.fetch(all)
                _ = try ahead.count(shelf)
                _ = try ahead.fetch(Query<Book>().filter(Book.Fields.title == "never made"))
                _ = try ahead.fetch(all.limit(2))
            }
            return (
                try reader.fetch(all).map(\.title), try reader.count(shelf),
                try reader.fetch(all.limit(1)).map(\.title),
                try reader.fetch(all).map(\.title)
            )
        }
        #expect(ahead.0 == plain.0 && ahead.1 == plain.1 && ahead.2 == plain.2 && ahead.3 == plain.0)
        let afterWrite = try await store.repository.write { writer in
            try writer.sendAhead { ahead in _ = try ahead.fetch(all) }
            var book = Book(sha256: sha("d"), title: "Beloved", author: nil, pages: 1, bytes: 1)
            try writer.insert(&book)
            return try writer.fetch(all).map(\.title)
        }
        #expect(afterWrite == ["Beloved", "Dune", "Emma", "Ulysses"])
    }

    /// `searchedBooks` (one statement on a server) answers what counting, summing, fetching and
    /// listing the books' languages apart do, for every scope, alone and sent ahead.
    static func searchedBooksAreTheirReads(_ store: any LibraryStore) async throws {
        let shelf: [(title: String, textless: Int, lang: String?)] = [
            ("Dune", 0, "en"), ("Emma", 3, "en"), ("Ulysses", 0, nil), ("Zazie", 5, "fr"), ("Faust", 0, "de"),
        ]
        var ids = [Int64]()
        for (index, book) in shelf.enumerated() {
            let id = try await store.repository.write { writer in
                var row = Book(
                    sha256: sha(Character(UnicodeScalar(97 + index)!)), title: book.title, author: nil, pages: 9,
                    bytes: 1)
                row.textlessPages = book.textless
                row.lang = book.lang
                try writer.insert(&row)
                return try #require(row.id)
            }
            ids.append(id)
        }
        @Sendable func apart(_ reader: any StoreReader, _ books: [Int64]?) throws -> SearchedBooks {
            var searched = Query<Book>()
            if let books { searched = searched.filter(Book.Fields.id.isIn(books)) }
            let scanned = try reader.fetch(searched.filter(Book.Fields.textlessPages > 0))
            return SearchedBooks(
                textlessBooks: scanned.count, textlessPages: scanned.map(\.textlessPages).reduce(0, +),
                textlessTitle: scanned.count == 1 ? scanned[0].title : nil,
                languages: Array(Set(try reader.fetch(searched).compactMap(\.lang))).sorted())
        }
        let made = ids
        let scopes: [[Int64]?] = [nil, [], [made[0]], [made[1]], [made[0], made[1], made[3]], [made[2], made[4]]]
        for books in scopes {
            let (expected, alone, sent, bare) = try await store.repository.read { reader in
                let expected = try apart(reader, books)
                let alone = try reader.searchedBooks(books, languages: true)
                try reader.sendAhead { ahead in _ = try ahead.searchedBooks(books, languages: true) }
                let sent = try reader.searchedBooks(books, languages: true)
                return (expected, alone, sent, try reader.searchedBooks(books, languages: false))
            }
            #expect(alone == expected, "\(String(describing: books))")
            #expect(sent == expected, "\(String(describing: books))")
            var languageless = expected
            languageless.languages = []
            #expect(bare == languageless, "\(String(describing: books))")
            // Sent ahead with the titles of the books a search hit (a server answers both in one
            // statement), read after the titles or before them; with their languages after.
            for factsFirst in [false, true] {
                let (facts, titles, withLanguages) = try await store.repository.read { reader in
                    try reader.sendAhead { ahead in
                        _ = try ahead.searchedBooks(books, languages: false)
                        _ = try ahead.titles(of: [made[0], made[3]])
                    }
                    let facts = factsFirst ? try reader.searchedBooks(books, languages: false) : nil
                    let titles = try reader.titles(of: [made[0], made[3]])
                    return (
                        try facts ?? reader.searchedBooks(books, languages: false), titles,
                        try reader.searchedBooks(books, languages: true)
                    )
                }
                #expect(facts == languageless, "\(String(describing: books)) \(factsFirst)")
                #expect(titles == [made[0]: "Dune", made[3]: "Zazie"])
                #expect(withLanguages == expected, "\(String(describing: books)) \(factsFirst)")
            }
        }
        // Sent with the look-up of a search's words (a server answers both in one statement),
        // read before the pages found or after them, with their languages or without; the pages
        // found as without it. After a write, what the write changed.
        try await store.repository.write { writer in
            for (book, text) in [(made[0], "the river runs"), (made[3], "rivers of paris"), (made[4], "no water")] {
                var page = PageText(bookId: book, number: 1, text: text)
                try writer.insert(&page)
            }
        }
        @Sendable func riverPages(_ reader: any StoreReader) throws -> [Int64] {
            var found = [Int64]()
            try reader.textIndex.candidatePages(containing: ["river"], words: .holding(["river"]), books: nil) {
                found.append($0.bookId)
                return true
            }
            return found.sorted()
        }
        let plainPages = try await store.repository.read { try riverPages($0) }
        #expect(plainPages.contains(made[0]))
        for books in scopes {
            for factsFirst in [false, true] {
                let (facts, pages, bare) = try await store.repository.read { reader in
                    try reader.textIndex.lookAhead(
                        containing: ["river"], asking: BooksSearched(books: books, languages: true))
                    let facts = factsFirst ? try reader.searchedBooks(books, languages: true) : nil
                    let pages = try riverPages(reader)
                    return (
                        try facts ?? reader.searchedBooks(books, languages: true), pages,
                        try reader.searchedBooks(books, languages: false)
                    )
                }
                let expected = try await store.repository.read { try apart($0, books) }
                var languageless = expected
                languageless.languages = []
                #expect(facts == expected, "\(String(describing: books)) \(factsFirst)")
                #expect(bare == languageless, "\(String(describing: books)) \(factsFirst)")
                #expect(pages == plainPages, "\(String(describing: books)) \(factsFirst)")
            }
        }
        // Words no page holds (the facts alone come back), and a term no word look-up answers.
        for terms in [["zzyzx"], ["of"]] {
            let facts = try await store.repository.read { reader in
                try reader.textIndex.lookAhead(containing: terms, asking: BooksSearched(books: nil, languages: true))
                return try reader.searchedBooks(nil, languages: true)
            }
            #expect(facts == (try await store.repository.read { try apart($0, nil) }), "\(terms)")
        }
        let rewritten = try await store.repository.write { writer in
            try writer.textIndex.lookAhead(containing: ["river"], asking: BooksSearched(books: nil, languages: true))
            var book = try #require(try writer.find(Book.self, id: made[4]))
            book.textlessPages = 2
            book.lang = "it"
            try writer.update(book)
            return (try writer.searchedBooks(nil, languages: true), try riverPages(writer))
        }
        #expect(rewritten.0 == (try await store.repository.read { try apart($0, nil) }))
        #expect(rewritten.0.textlessBooks == 3 && rewritten.0.languages == ["en", "fr", "it"])
        #expect(rewritten.1 == plainPages)
        try await store.repository.write { writer in
            var book = try #require(try writer.find(Book.self, id: made[4]))
            book.textlessPages = 0
            book.lang = "de"
            try writer.update(book)
        }
        // The titles of the books hit: those of the ids given that are books.
        let titles = try await store.repository.read { reader in
            [
                try reader.titles(of: []), try reader.titles(of: [made[4], made[0]]),
                try reader.titles(of: [made[2], -7]),
            ]
        }
        #expect(titles == [[:], [made[4]: "Faust", made[0]: "Dune"], [made[2]: "Ulysses"]])
        // The page labels of the books hit that label their pages, without their outlines: what
        // their guides hold, alone and sent ahead.
        let outline = (1...300).map { OutlineItem(title: "Part \($0)", page: $0 % 9 + 1, level: $0 % 3 + 1) }
        try await store.repository.write { writer in
            for (book, labels) in [(made[0], ["i", "ii", "1", "", "2"]), (made[1], nil), (made[3], ["A-1", "é 2"])] {
                var guide = BookGuide(bookId: book, labels: labels, outline: outline)
                try writer.insert(&guide)
            }
        }
        let asked: [[Int64]] = [[], [made[0]], [made[1], made[2]], [made[3], made[0], -7], made]
        let (labels, guides, sent) = try await store.repository.read { reader in
            let labels = try asked.map { try reader.pageLabels(of: $0) }
            let guides = try asked.map { books in
                try reader.fetch(Query<BookGuide>().filter(BookGuide.Fields.bookId.isIn(books)))
                    .reduce(into: [Int64: [String]]()) { labels, guide in labels[guide.bookId] = guide.labels }
            }
            try reader.sendAhead { ahead in _ = try ahead.pageLabels(of: made) }
            return (labels, guides, try reader.pageLabels(of: made))
        }
        #expect(labels == guides)
        #expect(labels[3] == [made[3]: ["A-1", "é 2"], made[0]: ["i", "ii", "1", "", "2"]])
        #expect(sent == labels[4])
        #expect(BookGuide.label(of: 3, in: labels[1][made[0]] ?? []) == "1")
        #expect(BookGuide.label(of: 4, in: labels[1][made[0]] ?? []) == nil)
        // As a search reads them: the titles of the books hit, then the labels of those shown
        // (the same or fewer), made and sent ahead together.
        let together = try await store.repository.read { reader in
            let titles = try reader.titles(of: made)
            let shown = try reader.pageLabels(of: [made[3], made[1]])
            try reader.sendAhead { ahead in
                _ = try ahead.titles(of: [made[0], made[3], -7])
                _ = try ahead.pageLabels(of: [made[0], made[3]])
            }
            let labelsFirst = try reader.pageLabels(of: [made[0], made[3]])
            let sentTitles = try reader.titles(of: [made[0], made[3], -7])
            return [titles.count, shown == [made[3]: ["A-1", "é 2"]] ? 1 : 0, labelsFirst == labels[3] ? 1 : 0]
                + [sentTitles == [made[0]: "Dune", made[3]: "Zazie"] ? 1 : 0]
        }
        #expect(together == [5, 1, 1, 1])
        // A write between is seen by what the transaction reads after it.
        let written = try await store.repository.write { writer in
            let before = (try writer.titles(of: [made[0]]), try writer.pageLabels(of: [made[0]]))
            var guide = try #require(
                try writer.fetch(Query<BookGuide>().filter(BookGuide.Fields.bookId == made[0])).first)
            guide.labels = ["x", "y"]
            try writer.update(guide)
            var book = try #require(try writer.find(Book.self, id: made[0]))
            book.title = "Dune Messiah"
            try writer.update(book)
            return [before.0[made[0]], before.1[made[0]]?.joined(), try writer.titles(of: [made[0]])[made[0]]]
                + [try writer.pageLabels(of: [made[0]])[made[0]]?.joined()]
        }
        #expect(written == ["Dune", "iii12", "Dune Messiah", "xy"])
        // The one scanned book's title, whichever it is.
        let one = try await store.repository.read { try $0.searchedBooks([made[3], made[4]], languages: false) }
        #expect(one == SearchedBooks(textlessBooks: 1, textlessPages: 5, textlessTitle: "Zazie"))
    }

    static func insertAssignsIdsAndFetchesBack(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Dune", sha: sha("a"), author: "Herbert")
        let id = try #require(book.id)
        let fetched = try await store.repository.read { try $0.find(Book.self, id: id) }
        #expect(fetched?.title == "Dune")
        #expect(fetched?.uuid == book.uuid)
        // Dates survive the round trip to the millisecond.
        #expect(abs((fetched?.addedAt.timeIntervalSince1970 ?? 0) - book.addedAt.timeIntervalSince1970) < 0.002)
        let other = try await makeBook(store, "Emma", sha: sha("b"))
        #expect(other.id != book.id, "each insert gets its own id")
    }

    static func filtersSortsAndPages(_ store: any LibraryStore) async throws {
        _ = try await makeBook(store, "Zen", sha: sha("1"), folder: "a")
        _ = try await makeBook(store, "alpha", sha: sha("2"), folder: "a/b")
        _ = try await makeBook(store, "Mid", sha: sha("3"), folder: "c")
        let repository = store.repository
        let sorted = try await repository.read {
            try $0.fetch(Query<Book>().sorted(by: Book.Fields.title.ascending)).map(\.title)
        }
        #expect(sorted == ["alpha", "Mid", "Zen"], "text sorts case-insensitively")
        let page = try await repository.read { reader in
            try reader.fetch(Query<Book>().sorted(by: Book.Fields.title.ascending).limit(1, offset: 1)).map(\.title)
        }
        #expect(page == ["Mid"])
        let inA = try await repository.read { reader in
            try reader.fetch(Query<Book>().filter(Book.Fields.folder == "a" || Book.Fields.folder.hasPrefix("a/")))
        }
        #expect(Set(inA.map(\.title)) == ["Zen", "alpha"])
        #expect(try await repository.read { try $0.count(Query<Book>().filter(!Book.Fields.folder.isNull)) } == 3)
        let some = try await repository.read { reader in
            try reader.fetch(Query<Book>().filter(Book.Fields.sha256.isIn([sha("1"), sha("3"), sha("9")])))
        }
        #expect(Set(some.map(\.title)) == ["Zen", "Mid"])
        // Edge cases both backends write their own SQL for: empty lists, NULL operands, negation,
        // an offset without a limit.
        let counts = try await repository.read { reader in
            try [
                Predicate.isIn("sha256", []), !Book.Fields.sha256.isIn([]), .and([]), .or([]),
                .compare("author", .equal, .null), .compare("author", .notEqual, .null),
                .compare("author", .less, .null), !(Book.Fields.title == "Zen" || Book.Fields.title == "Mid"),
                Book.Fields.title != "Zen" && Book.Fields.folder.hasPrefix("a"),
            ].map { try reader.count(Query<Book>().filter($0)) }
        }
        #expect(counts == [0, 3, 3, 0, 3, 0, 0, 1, 1])
        let rest = try await repository.read { reader in
            try reader.fetch(Query<Book>().sorted(by: Book.Fields.title.descending).limit(nil, offset: 1)).map(\.title)
        }
        #expect(rest == ["Mid", "alpha"])
        // Sums: of the rows matched (each made with 3 pages), 0 when none match.
        let sums = try await repository.read { reader in
            (
                try reader.sum(Book.Fields.pages, Query<Book>().filter(Book.Fields.folder.hasPrefix("a"))),
                try reader.sum(Book.Fields.pages, Query<Book>().filter(Book.Fields.title == "none"))
            )
        }
        #expect(sums.0 == 6 && sums.1 == 0)
        // Distinct values: each once, nil left out, only of the rows matched.
        let folders = try await repository.read { reader in
            (
                try reader.distinct(Book.Fields.folder, Query<Book>()),
                try reader.distinct(Book.Fields.folder, Query<Book>().filter(Book.Fields.title != "Mid")),
                try reader.distinct(Book.Fields.author, Query<Book>())
            )
        }
        #expect(Set(folders.0) == ["a", "a/b", "c"] && folders.0.count == 3)
        #expect(Set(folders.1) == ["a", "a/b"] && folders.1.count == 2)
        #expect(folders.2.isEmpty)
        _ = try await makeBook(store, "Other", sha: sha("4"), folder: "c")
        #expect(try await repository.read { try $0.distinct(Book.Fields.folder, Query<Book>()) }.count == 3)
    }

    static func upsertUpdatesByNaturalKeyElseInserts(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Book", sha: sha("5"))
        let bookId = try #require(book.id)
        let (first, second, sources) = try await store.repository.write { writer in
            var source = Source(bookId: bookId, url: "http://x/a.pdf", etag: "v1")
            try writer.upsert(&source)
            var again = Source(bookId: bookId, url: "http://x/a.pdf", etag: "v2")
            try writer.upsert(&again)
            return (source, again, try writer.all(Source.self))
        }
        #expect(second.uuid == first.uuid, "an upsert keeps the row's identity")
        #expect(second.id == first.id)
        #expect(sources.count == 1)
        #expect(sources.first?.etag == "v2")
        // Keyed by UUID: the same annotation saved twice is one row, changed.
        let memos = try await store.repository.write { writer in
            var memo = Memo(bookId: bookId, page: 1, text: "first")
            try writer.upsert(&memo)
            memo.text = "second"
            memo.id = nil
            try writer.upsert(&memo)
            return try writer.all(Memo.self)
        }
        #expect(memos.map(\.text) == ["second"])
    }

    static func aFailingWriteChangesNothing(_ store: any LibraryStore) async throws {
        struct Boom: Error {}
        await #expect(throws: Boom.self) {
            try await store.repository.write { writer in
                var book = Book(sha256: sha("6"), title: "Half", author: nil, pages: 1, bytes: 1)
                try writer.insert(&book)
                throw Boom()
            }
        }
        #expect(try await store.repository.read { try $0.count(Query<Book>()) } == 0)
    }

    static func deletingABookCascades(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Gone", sha: sha("7"))
        let bookId = try #require(book.id)
        try await store.repository.write { writer in
            var source = Source(bookId: bookId, url: "file:///x.pdf")
            try writer.insert(&source)
            var tag = MarginCore.Tag(bookId: bookId, name: "t")
            try writer.insert(&tag)
            var memo = Memo(bookId: bookId, page: nil, text: "on the book")
            try writer.insert(&memo)
            var page = PageText(bookId: bookId, number: 1, text: "words")
            try writer.insert(&page)
            try writer.delete(book)
        }
        let left = try await store.repository.read { reader in
            [
                try reader.count(Query<Source>()), try reader.count(Query<MarginCore.Tag>()),
                try reader.count(Query<Memo>()),
                try reader.count(Query<PageText>()),
            ]
        }
        #expect(left == [0, 0, 0, 0])
        let hits = try await store.repository.read {
            try $0.textIndex.candidateAnnotations(containing: ["book"], books: nil)
        }
        #expect(hits.isEmpty, "the index forgets what was deleted")
    }

    static func foreignKeysAreEnforced(_ store: any LibraryStore) async throws {
        // An annotation or source pointing at no book must be impossible.
        await #expect(throws: (any Error).self) {
            try await store.repository.write { writer in
                var orphan = Source(bookId: 999, url: "http://x")
                try writer.insert(&orphan)
            }
        }
    }

    static func duplicateShaIsRejected(_ store: any LibraryStore) async throws {
        _ = try await makeBook(store, "One", sha: sha("8"))
        await #expect(throws: (any Error).self) { try await makeBook(store, "Two", sha: sha("8")) }
    }

    static func everyFieldRoundTrips(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Fields", sha: sha("c"))
        let bookId = try #require(book.id)
        var unsaved = Highlight(
            bookId: bookId, page: 2, text: "ﬁne Ünïcode", prefix: "before ", suffix: " after", rects: [[1.5, 2, 3, 4]],
            color: "#ff0000", note: "a note", author: "Ann")
        unsaved.orphaned = true
        let (highlight, memo) = try await store.repository.write { [unsaved] writer in
            var highlight = unsaved
            var memo = Memo(bookId: bookId, page: nil, text: "whole book", author: nil)
            try writer.insert(&highlight)
            try writer.insert(&memo)
            return (highlight, memo)
        }
        let (savedHighlight, savedMemo) = try await store.repository.read { reader in
            (try reader.all(Highlight.self).first, try reader.all(Memo.self).first)
        }
        let saved = try #require(savedHighlight)
        #expect(saved.uuid == highlight.uuid && saved.text == highlight.text && saved.prefix == highlight.prefix)
        #expect(saved.suffix == highlight.suffix && saved.rects == highlight.rects && saved.color == highlight.color)
        #expect(saved.note == "a note" && saved.author == "Ann" && saved.orphaned)
        #expect(savedMemo?.page == nil && savedMemo?.text == "whole book" && savedMemo?.uuid == memo.uuid)
    }

    /// The store says who made an annotation or a book (nil in a personal library, the user in a
    /// team one), keeps whether an annotation is shared, and when a book was opened.
    static func whoMadeARowIsKept(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Owned", sha: sha("9"))
        let bookId = try #require(book.id)
        let user = try await store.repository.read { $0.user }
        #expect(book.addedBy == user)
        let (bookmark, memo) = try await store.repository.write { writer in
            var bookmark = Bookmark(bookId: bookId, page: 1, label: "shared")
            bookmark.shared = true
            var memo = Memo(bookId: bookId, page: 2, text: "private")
            try writer.insert(&bookmark)
            try writer.insert(&memo)
            return (bookmark, memo)
        }
        #expect(bookmark.owner == user && memo.owner == user, "the insert says who made it")
        let read = try await store.repository.read { reader in
            (try reader.all(Bookmark.self), try reader.all(Memo.self), try reader.find(Book.self, id: bookId))
        }
        #expect(read.0.map(\.shared) == [true] && read.1.map(\.shared) == [false])
        #expect(read.0.first?.owner == user && read.2?.addedBy == user)
        let opened = Date(timeIntervalSince1970: 1_700_000_000.5)
        _ = try await store.touchBook(id: bookId, at: opened)
        let touched = try await store.repository.read { try $0.find(Book.self, id: bookId) }
        #expect(abs((touched?.openedAt?.timeIntervalSince1970 ?? 0) - opened.timeIntervalSince1970) < 0.002)
        let recent = try await store.repository.read { reader in
            try reader.fetch(
                Query<Book>().filter(!Book.Fields.openedAt.isNull).sorted(by: Book.Fields.openedAt.descending))
        }
        #expect(recent.map(\.id) == [bookId])
        // Noted opened in a write (as an annotation saved is): the book as read, with its new
        // opening, each time; a book that is not there: nil, and no opening written for it.
        var noted = [Book?]()
        for second in 1...4 {
            let at = Date(timeIntervalSince1970: 1_700_000_100.25 + Double(second))
            noted += try await store.repository.write { writer in
                [try writer.noteOpened(bookId: bookId, at: at), try writer.noteOpened(bookId: bookId + 999, at: at)]
            }
        }
        #expect(noted.count == 8 && noted.indices.allSatisfy { ($0 % 2 == 0) == (noted[$0] != nil) })
        #expect(noted[6]?.title == touched?.title && noted[6]?.sha256 == touched?.sha256)
        #expect(noted[6]?.openedAt == Date(timeIntervalSince1970: 1_700_000_104.25))
        let reread = try await store.repository.read { reader in
            (
                try reader.find(Book.self, id: bookId),
                try reader.fetch(Query<Book>().filter(!Book.Fields.openedAt.isNull)).map(\.id)
            )
        }
        #expect(abs((reread.0?.openedAt?.timeIntervalSince1970 ?? 0) - 1_700_000_104.25) < 0.002)
        #expect(reread.0?.title == touched?.title && reread.1 == [bookId])
        let unshared = try await store.updateAnnotation(Bookmark.self, id: try #require(bookmark.id), now: Date()) {
            $0.shared = false
        }
        #expect(!unshared.shared)
        #expect(try await store.repository.read { try $0.all(Bookmark.self) }.map(\.shared) == [false])
    }

    static func thePageIndexFindsFoldedTerms(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Pages", sha: sha("d"))
        let bookId = try #require(book.id)
        try await store.repository.write { writer in
            for (number, text) in [(1, "Über Straße"), (2, "nothing here"), (3, "uber again, and STRASSE")] {
                var page = PageText(bookId: bookId, number: number, text: text)
                try writer.insert(&page)
            }
        }
        let found = try await store.repository.read { reader in
            var found = [Int]()
            try reader.textIndex.candidatePages(containing: [folded("UBER")], books: [bookId]) { page in
                found.append(page.number)
                return true
            }
            return found
        }
        // Candidates: at least every page that holds the term (the caller checks each).
        #expect(Set(found).isSuperset(of: [1, 3]))
        let all = try await store.repository.read { reader in
            var all = [Int]()
            try reader.textIndex.scanPages(books: [bookId]) { page in
                all.append(page.number)
                return true
            }
            return all
        }
        #expect(all == [1, 2, 3], "a scan gives every page in order")
        // The vocabulary's words by how they start, several prefixes at once, in order; more than
        // the limit: nil. A prefix is read as written (no pattern).
        let vocabularies = try await store.repository.read { reader in
            [
                try reader.textIndex.vocabularies(startingWith: ["ub", "str", "zzz", "a", "h", "a%", "a_"], limit: 5),
                try reader.textIndex.vocabularies(startingWith: ["a", "n"], limit: 1),
                try reader.textIndex.vocabularies(startingWith: [], limit: 5),
            ]
        }
        #expect(
            vocabularies == [
                [["uber"], ["strasse", "straße"], [], ["again", "and"], ["here"], [], []], [nil, ["nothing"]], [],
            ])
        // No book: no page.
        let none = try await store.repository.read { reader in
            var none = 0
            try reader.textIndex.scanPages(books: []) { _ in
                none += 1
                return true
            }
            try reader.textIndex.candidatePages(containing: [folded("UBER")], books: []) { _ in
                none += 1
                return true
            }
            return none
                + (try reader.textIndex.countCandidatePages(containing: [folded("UBER")], books: [], cap: 10) ?? 0)
        }
        #expect(none == 0, "an empty list of books holds no page")
    }

    static func thePageIndexFindsPiecesAndFollows(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Words", sha: sha("w"))
        let bookId = try #require(book.id)
        let texts = [
            "The radioisotopes decay; see section 4.2 of the report.",
            "An inverted index — it maps each word to its pages.",
            "Nothing relevant on this page at all.",
        ]
        var saved = try await store.repository.write { writer in
            try texts.enumerated().map { offset, text in
                var page = PageText(bookId: bookId, number: offset + 1, text: text)
                try writer.insert(&page)
                return page
            }
        }
        func candidates(_ terms: String...) async throws -> Set<Int> {
            try await store.repository.read { reader in
                var found = Set<Int>()
                try reader.textIndex.candidatePages(containing: terms.map(folded), books: [bookId]) { page in
                    found.insert(page.number)
                    return true
                }
                return found
            }
        }
        // Inside a word, at either end of a phrase, across punctuation: every page that holds
        // the term is a candidate.
        #expect(try await candidates("isotope").contains(1))
        #expect(try await candidates("nverted ind").contains(2))
        #expect(try await candidates("index — it").contains(2))
        #expect(try await candidates("section 4.2").contains(1))
        #expect(try await candidates("DECAY", "report").contains(1))
        // A word of three letters or more that no page holds has no candidates: the index
        // answers it, not a scan.
        #expect(try await candidates("qzxwv").isEmpty)
        #expect(try await candidates("isotope", "qzxwv").isEmpty)
        #expect(try await !candidates("isotope").contains(3))
        // Changed text is found by its new words only; a deleted page is gone.
        saved[2].text = "Now it speaks of isotopes too."
        try await store.repository.write { [saved] writer in try writer.update(saved[2]) }
        #expect(try await candidates("isotope").isSuperset(of: [1, 3]))
        #expect(try await !candidates("relevant").contains(3))
        try await store.repository.write { [saved] writer in _ = try writer.delete(saved[0]) }
        #expect(try await !candidates("isotope").contains(1))
        #expect(try await candidates("isotope").contains(3))
    }

    static func theAnnotationIndexFollowsSavesAndDeletes(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Notes", sha: sha("e"))
        let bookId = try #require(book.id)
        var (highlight, memo) = try await store.repository.write { writer in
            var highlight = Highlight(
                bookId: bookId, page: 1, text: "Résumé of the method", prefix: "", suffix: "", rects: [],
                color: "#ffff00", note: nil)
            var memo = Memo(bookId: bookId, page: 1, text: "Crème brûlée")
            try writer.insert(&highlight)
            try writer.insert(&memo)
            return (highlight, memo)
        }
        func candidates(_ term: String) async throws -> Set<String> {
            let found = try await store.repository.read {
                try $0.textIndex.candidateAnnotations(containing: [folded(term)], books: [bookId])
            }
            return Set(found.map { "\($0.kind) \($0.id)" })
        }
        let highlightKey = "highlight \(highlight.id ?? -1)"
        let memoKey = "memo \(memo.id ?? -1)"
        #expect(try await candidates("RESUME").contains(highlightKey), "folded: case and accents")
        #expect(try await candidates("brulee").contains(memoKey))
        // A note saved later is found; the old text of an edited memo is not.
        highlight.note = "Zettelkasten"
        memo.text = "Tarte tatin"
        try await store.repository.write { [highlight, memo] writer in
            try writer.update(highlight)
            try writer.update(memo)
        }
        #expect(try await candidates("zettelkasten").contains(highlightKey))
        #expect(try await !candidates("brulee").contains(memoKey))
        #expect(try await candidates("tatin").contains(memoKey))
        try await store.repository.write { [memo] writer in _ = try writer.delete(memo) }
        #expect(try await !candidates("tatin").contains(memoKey))
    }

    static func pages(_ texts: [String]) -> PagesText {
        PagesText(pages: texts.enumerated().map { PageText(bookId: 0, number: $0.offset + 1, text: $0.element) })
    }

    static func addBookSavesABookOnce(_ store: any LibraryStore) async throws {
        let now = Date()
        let book = Book(sha256: sha("f"), title: "Once", author: nil, pages: 2, bytes: 99)
        let first = try await store.addBook(
            book, source: Source(bookId: 0, url: "http://a/once.pdf"), tags: ["read"], text: pages(["one", "two"]),
            now: now)
        #expect(!first.existed && first.book.id != nil && first.book.indexedAt != nil)
        let second = try await store.addBook(
            Book(sha256: sha("f"), title: "Other title", author: nil, pages: 2, bytes: 99),
            source: Source(bookId: 0, url: "file:///once.pdf"), tags: ["READ", "new"], text: nil, now: now)
        #expect(second.existed && second.book.id == first.book.id && second.book.title == "Once")
        let (books, versions, sources, tags, pageCount) = try await store.repository.read { reader in
            (
                try reader.count(Query<Book>()), try reader.count(Query<Version>()), try reader.count(Query<Source>()),
                try reader.fetch(Query<MarginCore.Tag>().sorted(by: MarginCore.Tag.Fields.name.ascending)).map(\.name),
                try reader.count(Query<PageText>())
            )
        }
        #expect(books == 1 && versions == 1 && sources == 2 && pageCount == 2)
        #expect(tags == ["new", "read"], "a tag the book has, in another case, is not added again")
        // The same source again is one row, updated.
        _ = try await store.addBook(
            book, source: Source(bookId: 0, url: "http://a/once.pdf", etag: "\"v2\""), tags: [], text: nil, now: now)
        let etags = try await store.repository.read { try $0.all(Source.self).compactMap(\.etag) }
        #expect(etags == ["\"v2\""])
    }

    static func removeBooksNeedsConfirmation(_ store: any LibraryStore) async throws {
        let added = try await store.addBook(
            Book(sha256: sha("9"), title: "Kept", author: nil, pages: 1, bytes: 1),
            source: Source(bookId: 0, url: "http://a/kept.pdf"), tags: ["t"], text: pages(["x"]), now: Date())
        let id = try #require(added.book.id)
        _ = try await store.addMemo(Memo(bookId: id, page: 1, text: "mine"), openedAt: nil)
        await #expect(throws: MarginError.self) { try await store.removeBooks(ids: [id], confirmed: false) }
        #expect(try await store.repository.read { try $0.count(Query<Book>()) } == 1, "nothing was removed")
        let removed = try await store.removeBooks(ids: [id], confirmed: true)
        #expect(removed.map(\.memos) == [1] && removed.first?.files == [sha("9")] && removed.first?.tags == ["t"])
        let left = try await store.repository.read { reader in
            [try reader.count(Query<Book>()), try reader.count(Query<Memo>()), try reader.count(Query<PageText>())]
        }
        #expect(left == [0, 0, 0])
    }

    static func addVersionServesAVersion(_ store: any LibraryStore) async throws {
        let added = try await store.addBook(
            Book(sha256: sha("a"), title: "Versions", author: nil, pages: 2, bytes: 10),
            source: Source(bookId: 0, url: "http://a/v.pdf"), tags: [], text: pages(["alpha", "beta"]), now: Date())
        let id = try #require(added.book.id)
        let bookmark = try await store.addBookmark(Bookmark(bookId: id, page: 2, label: nil), openedAt: nil)
        var highlight = try #require(
            try await store.addHighlights(
                [
                    Highlight(
                        bookId: id, page: 1, text: "alpha", prefix: "", suffix: "", rects: [[0, 0, 1, 1]],
                        color: "#ffff00", note: nil)
                ], openedAt: nil
            ).first)
        highlight.page = 2
        // The new version has a page inserted first: old page 2 is now page 3.
        let version = Version(bookId: id, sha256: sha("b"), bytes: 12, pages: 3, source: "http://a/v.pdf")
        try await store.addVersion(
            version, checked: nil,
            serving: VersionChange(
                text: pages(["new", "alpha", "beta"]), highlights: [highlight], pageMap: [1: 2, 2: 3]))
        let highlightId = highlight.id ?? -1
        let (book, versions, moved, anchored) = try await store.repository.read { reader in
            (
                try reader.find(Book.self, id: id), try reader.count(Query<Version>()),
                try reader.find(Bookmark.self, id: bookmark.id ?? -1), try reader.find(Highlight.self, id: highlightId)
            )
        }
        #expect(book?.sha256 == sha("b") && book?.pages == 3 && versions == 2)
        #expect(moved?.page == 3, "the bookmark follows its page")
        #expect(anchored?.page == 2, "the re-anchored highlight is saved")
        // Stored again without serving it: one row per version.
        try await store.addVersion(version, checked: nil, serving: nil)
        #expect(try await store.repository.read { try $0.count(Query<Version>()) } == 2)
    }

    static func annotationTransactions(_ store: any LibraryStore) async throws {
        let book = try await makeBook(store, "Annotated", sha: sha("0"))
        let id = try #require(book.id)
        let memo = try await store.addMemo(Memo(bookId: id, page: nil, text: "first"), openedAt: nil)
        let later = Date().addingTimeInterval(60)
        let changed = try await store.updateAnnotation(Memo.self, id: memo.id ?? -1, now: later) { $0.text = "second" }
        #expect(changed.text == "second" && changed.updatedAt == later)
        await #expect(throws: MarginError.self) {
            try await store.updateAnnotation(Memo.self, id: 999, now: later) { $0.text = "x" }
        }
        let bookmark = try await store.addBookmark(Bookmark(bookId: id, page: 1, label: nil), openedAt: nil)
        let labelled = try await store.updateAnnotation(Bookmark.self, id: bookmark.id ?? -1, now: later) {
            $0.label = "start here"
        }
        #expect(labelled.label == "start here" && labelled.updatedAt == later && labelled.uuid == bookmark.uuid)
        #expect(
            try await store.repository.read { try $0.find(Bookmark.self, id: bookmark.id ?? -1)?.label } == "start here"
        )
        await #expect(throws: MarginError.self) {
            try await store.updateAnnotation(Bookmark.self, id: 999, now: later) { $0.label = "x" }
        }
        let again = Memo(bookId: id, page: 1, text: "imported")
        let added = try await store.addNewAnnotations(highlights: [], memos: [again, memo])
        #expect(added.memos == 1, "a memo the library holds (same UUID) is left as it is")
        let removed = try await store.removeAnnotation(Memo.self, id: memo.id ?? -1)
        #expect(removed.uuid == memo.uuid)
        await #expect(throws: MarginError.self) { try await store.removeAnnotation(Memo.self, id: memo.id ?? -1) }
        #expect(try await store.repository.read { try $0.all(Memo.self).map(\.text) } == ["imported"])
    }

    static func importBackupMerges(_ store: any LibraryStore) async throws {
        let book = Book(sha256: sha("c"), title: "Backed up", author: nil, pages: 2, bytes: 20)
        var memo = Memo(bookId: 0, page: 2, text: "from the backup")
        memo.updatedAt = Date(timeIntervalSince1970: 1_000_000)
        func entry(_ memos: [Memo]) -> BackupBook {
            BackupBook(
                place: "books[0]", book: book, sources: ["http://a/b.pdf"], tags: ["t"], cachedFile: nil, bookmarks: [],
                highlights: [], memos: memos)
        }
        let dry = try await store.importBackup([entry([memo])], dryRun: true)
        #expect(dry.books.added == 1 && dry.memos.added == 1)
        #expect(try await store.repository.read { try $0.count(Query<Book>()) } == 0, "a dry run changes nothing")
        let first = try await store.importBackup([entry([memo])], dryRun: false)
        #expect(first.books.added == 1 && first.memos.added == 1)
        let again = try await store.importBackup([entry([memo])], dryRun: false)
        #expect(again.books.unchanged == 1 && again.memos.unchanged == 1 && again.memos.added == 0)
        var newer = memo
        newer.text = "changed later"
        newer.updatedAt = Date(timeIntervalSince1970: 2_000_000)
        let merged = try await store.importBackup([entry([newer])], dryRun: false)
        #expect(merged.memos.updated == 1 && merged.memos.conflicts == 1)
        let older = memo
        let kept = try await store.importBackup([entry([older])], dryRun: false)
        #expect(kept.memos.unchanged == 1 && kept.memos.conflicts == 1, "the older side loses")
        #expect(try await store.repository.read { try $0.all(Memo.self).map(\.text) } == ["changed later"])
        // A page outside the book, or one UUID twice, imports nothing.
        var outside = Memo(bookId: 0, page: 9, text: "nowhere")
        outside.uuid = UUID()
        await #expect(throws: MarginError.self) { try await store.importBackup([entry([outside])], dryRun: false) }
        await #expect(throws: MarginError.self) {
            try await store.importBackup([entry([newer, newer])], dryRun: false)
        }
        #expect(try await store.repository.read { try $0.count(Query<Memo>()) } == 1)
    }
}
