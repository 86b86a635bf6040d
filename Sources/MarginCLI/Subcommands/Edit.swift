import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a book's title, author, folder, tags, memo or language.",
            discussion: """
                An empty value clears author, folder or memo (--folder ""). Tags: --tag adds, \
                --untag removes; both repeat. --password - stores the password of an encrypted \
                PDF (sealed with a key kept apart from the library), checked on the PDF first: \
                for a book restored from a backup, which carries no passwords.

                --lang sets the language the book's words are stemmed in when searched (margin \
                tells it from the text when indexing: en, de, fr, es, it, pt, nl, sv, ru; ja and zh \
                by their scripts); a language set by hand stays through a refresh, --lang auto \
                tells it from the text again.

                Examples:
                  margin edit 3 --folder papers/ml --tag read --untag to-read
                  margin edit 5 --lang de
                """
        )

        @Argument(help: "The book.")
        var book: String

        @Option(help: "New title.")
        var title: String?

        @Option(help: "New author (\"\" clears it).")
        var author: String?

        @Option(help: ArgumentHelp("Move to this folder (\"\" clears it).", valueName: "F"))
        var folder: String?

        @Option(name: .customLong("tag"), help: ArgumentHelp("Add a tag.", valueName: "T"))
        var tags: [String] = []

        @Option(name: .customLong("untag"), help: ArgumentHelp("Remove a tag.", valueName: "T"))
        var untags: [String] = []

        @Option(help: ArgumentHelp("A note on the whole book (\"\" clears it).", valueName: "TEXT"))
        var memo: String?

        @Option(help: ArgumentHelp("The book's language (en, de, fr, …; auto: told from the text).", valueName: "L"))
        var lang: String?

        @OptionGroup var secret: PasswordOptions

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if let title, title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw ValidationError("--title cannot be empty")
            }
            if let both = Set(tags.map { $0.lowercased() }).intersection(untags.map { $0.lowercased() }).first {
                throw ValidationError("--tag and --untag both name '\(both)'")
            }
        }

        func run() async throws {
            // Checked here, not in validate(), so that a misspelt option is reported as such.
            let password = try secret.read()
            if title == nil, author == nil, folder == nil, memo == nil, tags.isEmpty, untags.isEmpty, password == nil,
                lang == nil
            {
                throw ValidationError(
                    "nothing to change: give --title, --author, --folder, --tag, --untag, --memo, --lang or --password")
            }
            let library = try global.openLibrary()
            var changes = BookChanges(
                title: title, author: author, folder: folder, memo: memo, addTags: tags, removeTags: untags)
            changes.lang = lang?.lowercased()
            let selected = try await library.resolve(book)
            var info: BookInfo?
            if let password { info = try await library.setPassword(selected, password) }
            if !changes.isEmpty { info = try await library.edit(selected, changes) }
            guard let info else { return }
            try await global.show(info) {
                Console.out("updated \(info.book.id ?? 0)  \(info.book.title)")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove books and their cached PDFs from the library.",
            discussion: """
                Removes each BOOK with its sources, tags and annotations, and deletes its cached \
                PDF. A book with annotations is removed only with --yes. 'margin rm --all --yes' \
                empties the library.
                """
        )

        @Argument(help: "The books to remove.")
        var books: [String] = []

        @Flag(help: "Remove every book (needs --yes).")
        var all = false

        @Flag(help: "Confirm removing books with annotations, or all books.")
        var yes = false

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if all && !books.isEmpty { throw ValidationError("give either BOOK... or --all, not both") }
            if !all && books.isEmpty { throw ValidationError("give the books to remove, or --all --yes") }
            if all && !yes { throw ValidationError("--all removes every book: confirm with --all --yes") }
        }

        func run() async throws {
            let library = try global.openLibrary()
            // Every selector is resolved first: one unknown book and nothing happens.
            let selected = try await all ? library.allBooks() : library.resolveAll(books)
            let report = try await library.remove(selected, confirmed: yes)
            try await global.show(report) {
                for item in report.removed {
                    let notes = item.highlights + item.memos + item.bookmarks
                    let extra =
                        notes > 0
                        ? " with \(count(item.highlights, "highlight")), \(count(item.memos, "memo")), \(count(item.bookmarks, "bookmark"))"
                        : ""
                    Console.out("removed \(item.book.book.id ?? 0)  \(item.book.book.title)\(extra)")
                }
                if report.removed.isEmpty { global.note("the library was already empty") }
            }
        }
    }
}
