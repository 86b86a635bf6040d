import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct BookmarkCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bookmark",
            abstract: "Add, list, edit and remove bookmarks on pages.",
            subcommands: Margin.subcommands(of: BookmarkCommand.self)
        )

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add", abstract: "Bookmark a page.",
                discussion: "Example: margin bookmark add 3 42 --label \"proof of lemma 2\""
            )

            @Argument(help: "The book.") var book: String
            @Argument(help: "The page (1-based).") var page: Int
            @Option(help: "A label for the bookmark.") var label: String?
            @Flag var sharing: Sharing?
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary()
                let shown = try await library.addBookmarkShown(
                    library.resolve(book), page: page, label: label, shared: sharing?.isShared ?? false)
                let bookmark = shown.annotation
                try await global.show(shown) {
                    Console.out("bookmark \(bookmark.id ?? 0) on page \(bookmark.page)")
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List bookmarks, by page (of one book, or all)."
            )

            @Argument(help: "The book (all books when omitted).") var book: String?
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let (bookmarks, titles, library) = try await annotationListing(global, book) {
                    try await $0.bookmarks(of: $1)
                }
                try await global.show(try await library.views(bookmarks, titles: titles)) {
                    if bookmarks.isEmpty { return global.note("no bookmarks") }
                    annotationTable(
                        ["ID", "BOOK", "PAGE", "LABEL"], bookmarks
                    ) {
                        [
                            String($0.id ?? 0), Console.cell(titles[$0.bookId], width: 40), String($0.page),
                            Console.cell($0.label),
                        ]
                    }
                }
            }
        }

        struct Edit: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "edit", abstract: "Change a bookmark's label (--label \"\" clears it), or share it."
            )

            @Argument(help: "The bookmark's id.") var id: Int64
            @Option(help: "The new label.") var label: String?
            @Flag var sharing: Sharing?
            @OptionGroup var global: GlobalOptions

            func validate() throws {
                if label == nil && sharing == nil {
                    throw ValidationError("nothing to change: give --label, --shared or --private")
                }
            }

            func run() async throws {
                let library = try global.openLibrary()
                let bookmark = try await library.editBookmark(
                    id: id, label: label, keepLabel: label == nil, shared: sharing?.isShared)
                try await global.show(try await library.view(bookmark)) {
                    Console.out("updated bookmark \(id)")
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a bookmark.")

            @Argument(help: "The bookmark's id.") var id: Int64
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary()
                let bookmark = try await library.removeBookmark(id: id)
                try await global.show(try await library.view(bookmark)) {
                    Console.out("removed bookmark \(id) (page \(bookmark.page))")
                }
            }
        }
    }
}

/// What a list command shows (of one book, or of all when `book` is nil), with book titles by id.
func annotationListing<T>(
    _ global: GlobalOptions, _ book: String?, _ fetch: (Library, Book?) async throws -> [T]
) async throws -> (items: [T], titles: [Int64: String], library: Library) {
    let library = try global.openLibrary()
    let selected = try await book.asyncMap { try await library.resolve($0) }
    return (try await fetch(library, selected), try await bookTitles(library), library)
}

/// Book titles by id, for listings across the library.
func bookTitles(_ library: Library) async throws -> [Int64: String] {
    Dictionary(
        try await library.allBooks().compactMap { book in book.id.map { ($0, book.title) } },
        uniquingKeysWith: { a, _ in a })
}

/// Prints annotations as a table; in a team library (where annotations have owners) with a
/// column saying whose each is, and which are shared.
func annotationTable<M: Annotation>(_ header: [String], _ models: [M], _ row: (M) -> [String]) {
    let rows = models.map(row)
    guard models.contains(where: { $0.owner != nil }) else { return Console.table(header, rows) }
    Console.table(
        header + ["BY"],
        zip(models, rows).map { model, row in row + [(model.owner ?? "-") + (model.shared ? " (shared)" : "")] })
}
