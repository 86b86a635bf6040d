import Foundation
import MarginCore
import Markup

/// What a metadata service says a work is.
public struct LookedUp: Sendable, Equatable, Encodable {
    /// "crossref" or "arxiv".
    public var service: String
    public var title: String?
    public var authors: [PersonName] = []
    public var year: Int?
    public var venue: String?
    public var publisher: String?
    public var doi: String?
    public var arxiv: String?
    /// What kind of work it is, in Crossref's words (`journal-article`, `proceedings-article`, …).
    public var workType: String?

    /// The authors as the book's author field holds them.
    public var author: String? {
        authors.isEmpty ? nil : authors.map(\.displayName).joined(separator: ", ")
    }
}

/// Crossref (by DOI) and arXiv (by id), over the library's downloader: only when asked.
enum MetadataLookup {
    static func crossref(doi: String, configuration: Configuration, downloader: any Downloader) async throws
        -> LookedUp
    {
        // Crossref takes the DOI as it is written, its slash included.
        let path = doi.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? doi
        let url = configuration.crossrefURL.trimmedSlash + "/works/" + path
        let answer = try await fetch(
            "Crossref", url, accept: "application/json", configuration: configuration, downloader: downloader)
        if answer.status == 404 {
            throw MarginError.lookupFailed(service: "Crossref", reason: "it has no record of DOI \(doi) (404)")
        }
        try expectJSON(answer, service: "Crossref", url: url)
        guard let root = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
            let message = root["message"] as? [String: Any]
        else {
            throw MarginError.lookupFailed(
                service: "Crossref", reason: "its answer for \(doi) is not the JSON it sends")
        }
        var found = LookedUp(service: "crossref")
        found.title = (message["title"] as? [String])?.first.map(clean).flatMap(nonEmpty)
        if let subtitle = (message["subtitle"] as? [String])?.first.map(clean).flatMap(nonEmpty),
            let title = found.title
        {
            found.title = title + ": " + subtitle
        }
        found.authors = ((message["author"] as? [[String: Any]]) ?? []).compactMap { person in
            if let family = (person["family"] as? String).map(clean).flatMap(nonEmpty) {
                return PersonName(given: (person["given"] as? String).map(clean).flatMap(nonEmpty), family: family)
            }
            return (person["name"] as? String).map(clean).flatMap(nonEmpty).map { PersonName(given: nil, family: $0) }
        }
        for key in ["issued", "published-print", "published-online", "created"] {
            if let parts = (message[key] as? [String: Any])?["date-parts"] as? [[Any]],
                let year = parts.first?.first as? Int
            {
                found.year = year
                break
            }
        }
        found.venue = (message["container-title"] as? [String])?.first.map(clean).flatMap(nonEmpty)
        found.publisher = (message["publisher"] as? String).map(clean).flatMap(nonEmpty)
        found.workType = (message["type"] as? String).flatMap(WorkType.known)
        found.doi = (message["DOI"] as? String).flatMap(Identifiers.parseDOI) ?? doi
        guard found.title != nil else {
            throw MarginError.lookupFailed(service: "Crossref", reason: "its record of \(doi) has no title")
        }
        return found
    }

    static func arxiv(id: String, configuration: Configuration, downloader: any Downloader) async throws -> LookedUp {
        let query = id.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? id
        let url = configuration.arxivURL.trimmedSlash + "/query?id_list=" + query
        let answer = try await fetch(
            "arXiv", url, accept: "application/atom+xml", configuration: configuration, downloader: downloader)
        guard answer.status == 200 else {
            throw MarginError.lookupFailed(service: "arXiv", reason: "the server answered \(answer.status) for \(url)")
        }
        let text = String(decoding: answer.body, as: UTF8.self)
        guard text.contains("<feed") else {
            throw MarginError.lookupFailed(
                service: "arXiv",
                reason: looksLikeHTML(answer)
                    ? "it answered with a web page, not its Atom feed" : "its answer is not an Atom feed")
        }
        guard let entry = try? AtomEntry(feed: answer.body) else {
            throw MarginError.lookupFailed(service: "arXiv", reason: "its answer is not an Atom feed")
        }
        guard let title = entry.fields["title"], title != "Error", let entryID = entry.fields["id"] else {
            throw MarginError.lookupFailed(service: "arXiv", reason: "it has no paper \(id)")
        }
        var found = LookedUp(service: "arxiv")
        found.title = clean(title)
        found.authors = entry.authors.compactMap { AuthorList.name(clean($0)) }
        found.year = entry.fields["published"].flatMap { Int($0.prefix(4)) }
        found.doi = entry.fields["arxiv:doi"].flatMap(Identifiers.parseDOI)
        found.venue = entry.fields["arxiv:journal_ref"].map(clean)
        // Published elsewhere, it is what its journal reference says (not known here); else a preprint.
        if found.venue == nil { found.workType = "posted-content" }
        found.arxiv = Identifiers.arxiv(inURL: entryID) ?? id
        return found
    }

    /// The service's answer, its failures to answer said as the lookup's.
    private static func fetch(
        _ service: String, _ url: String, accept: String, configuration: Configuration, downloader: any Downloader
    ) async throws -> WebAnswer {
        do {
            return try await downloader.fetch(
                url, accept: accept, timeout: configuration.lookupTimeout, maxSize: 4 << 20)
        } catch MarginError.timedOut(_, let seconds) {
            throw MarginError.lookupFailed(
                service: service,
                reason: "no answer from \(url) within \(formatSeconds(seconds)) (MARGIN_LOOKUP_TIMEOUT allows longer)")
        } catch MarginError.unreachable(_, let reason) {
            throw MarginError.lookupFailed(service: service, reason: "could not reach \(url): \(reason)")
        } catch MarginError.tooLarge {
            throw MarginError.lookupFailed(service: service, reason: "its answer is larger than any record (4 MiB)")
        }
    }

    private static func formatSeconds(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }

    private static func expectJSON(_ answer: WebAnswer, service: String, url: String) throws {
        guard answer.status == 200 else {
            throw MarginError.lookupFailed(service: service, reason: "the server answered \(answer.status) for \(url)")
        }
        if looksLikeHTML(answer) {
            throw MarginError.lookupFailed(service: service, reason: "it answered with a web page, not JSON")
        }
    }

    private static func looksLikeHTML(_ answer: WebAnswer) -> Bool {
        if answer.contentType?.lowercased().contains("html") == true { return true }
        let head = String(decoding: answer.body.prefix(512), as: UTF8.self).lowercased()
        return head.contains("<html") || head.contains("<!doctype html")
    }

    /// White space collapsed, markup a service leaves in titles (`<i>`, JATS tags) dropped.
    static func clean(_ text: String) -> String {
        let untagged = text.replacingOccurrences(of: "<[^>]{1,40}>", with: "", options: .regularExpression)
        return XMP.decodeEntities(untagged)
    }
}

/// The first entry of an Atom feed (arXiv's answer), read by libxml2: its children's text by
/// name (`title`, `id`, `published`, `arxiv:doi`…) and its authors' names, in order.
struct AtomEntry {
    var fields = [String: String]()
    var authors = [String]()

    /// Throws when the feed is not XML; `fields` is empty when it has no entry.
    init(feed: Data) throws {
        let nodes = try Markup.xml(feed, qualified: true)
        var path = [String]()
        var text = ""
        var entries = 0
        for node in nodes {
            switch node {
            case .start(let name, _, let empty):
                if path.count == 1 && name == "entry" { entries += 1 }
                if !empty { path.append(name) }
                text = ""
            case .text(let piece): text += piece
            case .end:
                let closed = path
                _ = path.popLast()
                guard entries == 1, closed.count >= 3, closed[1] == "entry" else { continue }
                let value = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                if closed.count == 3, fields[closed[2]] == nil, !value.isEmpty {
                    fields[closed[2]] = value
                } else if closed.count == 4, closed[2] == "author", closed[3] == "name", !value.isEmpty {
                    authors.append(value)
                }
                text = ""
            }
        }
    }
}

extension String {
    fileprivate var trimmedSlash: String { hasSuffix("/") ? String(dropLast()) : self }
}
