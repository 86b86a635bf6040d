import ArgumentParser
import Foundation
import MarginKit

extension Margin {
    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a book's title, author, folder, tags or memo.",
            discussion: """
                An empty value clears author, folder or memo (--folder ""). Tags: --tag adds, \
                --untag removes; both repeat.

                Example: margin edit 3 --folder papers/ml --tag read --untag to-read
                """)

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

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            if let title, title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                throw ValidationError("--title cannot be empty")
            }
            if title == nil, author == nil, folder == nil, memo == nil, tags.isEmpty, untags.isEmpty {
                throw ValidationError("nothing to change: give --title, --author, --folder, --tag, --untag or --memo")
            }
            if let both = Set(tags.map { $0.lowercased() }).intersection(untags.map { $0.lowercased() }).first {
                throw ValidationError("--tag and --untag both name '\(both)'")
            }
        }

        func run() throws {
            let library = try global.openLibrary()
            var changes = BookChanges()
            changes.title = title
            changes.author = author
            changes.folder = folder
            changes.memo = memo
            changes.addTags = tags
            changes.removeTags = untags
            let info = try library.edit(library.resolve(book), changes)
            if global.json { return try Console.json(info) }
            Console.out("updated \(info.book.id ?? 0)  \(info.book.title)")
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove books and their cached PDFs from the library.",
            discussion: """
                Removes each BOOK with its sources, tags and annotations, and deletes its cached \
                PDF. A book with annotations is removed only with --yes. 'margin rm --all --yes' \
                empties the library.
                """)

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

        func run() throws {
            let library = try global.openLibrary()
            // Every selector is resolved first: one unknown book and nothing happens.
            let selected = all ? try library.allBooks() : try library.resolveAll(books)
            let report = try library.remove(selected, confirmed: yes)
            if global.json { return try Console.json(report) }
            for item in report.removed {
                let notes = item.highlights + item.memos + item.bookmarks
                let extra = notes > 0 ? " with \(count(item.highlights, "highlight")), \(count(item.memos, "memo")), \(count(item.bookmarks, "bookmark"))" : ""
                Console.out("removed \(item.book.book.id ?? 0)  \(item.book.book.title)\(extra)")
            }
            if report.removed.isEmpty { global.note("the library was already empty") }
        }
    }
}
