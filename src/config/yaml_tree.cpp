#include "config/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/node/node.h>  // YAML::Node, which parser.h declares (unused here: for clang-tidy)
#include <yaml-cpp/parser.h>

#include <sstream>
#include <unordered_map>

namespace bk::yaml {

namespace {

const std::string kEmpty;

Mark mark_of(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line, mark.column};
}

}  // namespace

// Builds one Document from yaml-cpp's events. Containers are added to their parent when
// they start (so the order is the file's); the children of the open containers wait on
// one stack and move into the Document's children array when their container ends.
class Builder final : public YAML::EventHandler {
 public:
  explicit Builder(Document& document) : tree_(*document.tree_) {}

  void OnDocumentStart(const YAML::Mark& /*mark*/) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(make(Type::null, mark, anchor));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto found = anchors_.find(anchor);
    // yaml-cpp refuses an unknown alias before it gets here; a null stands in regardless.
    add(found != anchors_.end() ? found->second : make(Type::null, mark, 0));
  }
  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                const std::string& value) override {
    const std::uint32_t index = make(Type::scalar, mark, anchor);
    tree_.nodes[index].text = value;
    add(index);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    open(make(Type::sequence, mark, anchor));
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    open(make(Type::map, mark, anchor));
  }
  void OnMapEnd() override { close(); }

 private:
  std::uint32_t make(Type type, const YAML::Mark& mark, YAML::anchor_t anchor) {
    const auto index = static_cast<std::uint32_t>(tree_.nodes.size());
    tree_.nodes.push_back(detail::Tree::Data{type, mark_of(mark), 0, 0, {}});
    if (anchor != 0) anchors_[anchor] = index;
    return index;
  }
  void add(std::uint32_t index) {
    if (open_.empty()) {
      if (tree_.root == detail::Tree::kNone) tree_.root = index;
      return;
    }
    pending_.push_back(index);
  }
  void open(std::uint32_t index) {
    add(index);
    open_.emplace_back(index, pending_.size());
  }
  void close() {
    const auto [index, start] = open_.back();
    open_.pop_back();
    auto& data = tree_.nodes[index];
    data.first = static_cast<std::uint32_t>(tree_.children.size());
    data.count = static_cast<std::uint32_t>(pending_.size() - start);
    tree_.children.insert(tree_.children.end(),
                          pending_.begin() + static_cast<std::ptrdiff_t>(start), pending_.end());
    pending_.resize(start);
  }

  detail::Tree& tree_;
  std::vector<std::pair<std::uint32_t, std::size_t>> open_;  // container, its first pending
  std::vector<std::uint32_t> pending_;
  std::unordered_map<YAML::anchor_t, std::uint32_t> anchors_;
};

std::vector<Document> Document::parse_all(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<Document> documents;
  try {
    YAML::Parser parser(in);
    for (;;) {
      Document document;
      Builder builder(document);
      if (!parser.HandleNextDocument(builder)) break;
      documents.push_back(std::move(document));
    }
  } catch (const YAML::Exception& error) {
    throw SyntaxError(mark_of(error.mark), error.msg);
  }
  return documents;
}

Type Node::type() const {
  return tree_ == nullptr ? Type::undefined : tree_->nodes[index_].type;
}

const std::string& Node::scalar() const {
  return is_scalar() ? tree_->nodes[index_].text : kEmpty;
}

Mark Node::mark() const {
  return tree_ == nullptr ? Mark{} : tree_->nodes[index_].mark;
}

std::size_t Node::size() const {
  if (is_sequence()) return tree_->nodes[index_].count;
  if (is_map()) return tree_->nodes[index_].count / 2;
  return 0;
}

Children<false> Node::items() const {
  if (!is_sequence()) return {nullptr, nullptr, nullptr};
  const auto& data = tree_->nodes[index_];
  const std::uint32_t* first = tree_->children.data() + data.first;
  return {tree_, first, first + data.count};
}

Children<true> Node::pairs() const {
  if (!is_map()) return {nullptr, nullptr, nullptr};
  const auto& data = tree_->nodes[index_];
  const std::uint32_t* first = tree_->children.data() + data.first;
  return {tree_, first, first + data.count};
}

Node Node::empty_map() {
  static const Document document = [] {
    Document d;
    d.tree_->nodes.push_back(detail::Tree::Data{Type::map, {}, 0, 0, {}});
    d.tree_->root = 0;
    return d;
  }();
  return document.root();
}

}  // namespace bk::yaml
