import ArgumentParser
import Foundation
import MarginCore
import MarginKit

/// What a user reads for an error: the library's own words (which name no command), then what
/// to type about it, which only the command line knows.
func userMessage(for error: any Error) -> String {
    // A book looked for in a library that isn't there: say there is none, and how to make one.
    if let folder = AbsentLibrary.shared.folder, let error = error as? MarginError {
        switch error {
        case .bookNotFound, .emptyLibrary:
            return "there is no library in \(folder); 'margin add URL|PATH' makes one "
                + "(--library DIR or MARGIN_HOME chooses another)"
        default: break
        }
    }
    let text = (error as? LocalizedError)?.errorDescription ?? "\(error)"
    switch hint(for: error) {
    case .inline(let hint): return text + "; " + hint
    case .line(let hint): return text + "\nhint: " + hint
    case nil: return text
    }
}

/// A hint goes after the message on its line, or on a line of its own.
enum Hint {
    case inline(String)
    case line(String)
}

/// The command or option that helps with an error, if one does.
func hint(for error: any Error) -> Hint? {
    switch error {
    case let error as MarginError: return hint(for: error)
    case StoreError.truncated: return .inline("'margin import' restores a JSON export into a new library")
    case StoreError.damaged: return .inline("'margin db check' tells more")
    case PDFError.passwordRequired:
        return .inline("'margin edit BOOK --password -' stores one (when adding: --password -)")
    default: return nil
    }
}

private func hint(for error: MarginError) -> Hint? {
    switch error {
    case .bookNotFound:
        return .line(
            "'margin list' shows the library; select a book by id, SHA-256 prefix (4+ hex digits) or part of its title")
    case .emptyLibrary: return .inline("add a PDF with 'margin add URL|PATH'")
    case .tooLarge: return .inline("raise it with --max-size")
    case .timedOut: return .inline("--timeout S allows longer")
    case .encrypted: return .inline("give its password with --password - (asked for, not shown) or --password-fd N")
    case .passwordNotStored(_, let book):
        return .inline("'margin edit \(book) --password -' stores it")
    case .passwordUnavailable, .passwordNotKept:
        return .inline("give the password again with 'margin edit BOOK --password -'")
    case .fileNotCached(_, let book): return .line("'margin fetch \(book)' fetches it again from its sources")
    case .noSource: return .inline("add the PDF again with 'margin add PATH'")
    case .removalNeedsConfirmation: return .inline("add --yes to remove it with them")
    case .annotationNotFound(let kind, _): return .inline("'margin \(kind) list' shows them")
    case .alreadyHighlighted(_, _, let id): return .inline("'margin highlight edit \(id)' changes its note or colour")
    case .fileExists: return .inline("use --force to overwrite it")
    case .emptyQuery: return .inline("give a word, a \"quoted phrase\" or (with --regex) a pattern")
    default: return nil
    }
}
