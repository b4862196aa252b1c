// A read-only YAML document as the config loader needs it: scalars, lists and maps with
// their positions, built from yaml-cpp's parser events into flat arrays.
//
// Why not YAML::Node: a config of 200,000 board entries took yaml-cpp's node graph 7.8 s to
// build and 2 s to free (a shared_ptr per node, merged memory holders), four times what
// yaml-cpp's own parser needs to read it; this tree adds little to the parse.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bk::yaml {

enum class Type : std::uint8_t { undefined, null, scalar, sequence, map };

// 0-based, as yaml-cpp reports them; -1 when there is none.
struct Mark {
  int line = -1;
  int column = -1;
};

// A syntax error, where yaml-cpp found it (what() is yaml-cpp's message).
class SyntaxError : public std::runtime_error {
 public:
  SyntaxError(Mark at, const std::string& message) : std::runtime_error(message), mark(at) {}
  Mark mark;
};

template <bool kPairs>
class Children;

namespace detail {
// A document's nodes. It stays where it is when its Document moves, so nodes taken from
// a Document stay valid until the Document is destroyed.
struct Tree {
  static constexpr std::uint32_t kNone = UINT32_MAX;
  struct Data {
    Type type = Type::undefined;
    Mark mark;
    std::uint32_t first = 0;  // into children
    std::uint32_t count = 0;  // children: items, or keys and values alternating
    std::string text;
  };
  std::vector<Data> nodes;
  std::vector<std::uint32_t> children;
  std::uint32_t root = kNone;
};
}  // namespace detail

// A node of a Document (which must outlive it; moving the Document is fine), or the
// undefined node.
class Node {
 public:
  Node() = default;

  Type type() const;
  bool defined() const { return type() != Type::undefined; }
  bool is_null() const { return type() == Type::null; }
  bool is_scalar() const { return type() == Type::scalar; }
  bool is_sequence() const { return type() == Type::sequence; }
  bool is_map() const { return type() == Type::map; }
  // A scalar's text ("" for any other node).
  const std::string& scalar() const;
  Mark mark() const;
  // The items of a list, or the number of key/value pairs of a map; 0 otherwise.
  std::size_t size() const;

  // A list's items in order (none for another node).
  Children<false> items() const;
  // A map's key/value pairs in file order, duplicates included (none for another node).
  Children<true> pairs() const;

  // An empty map, for a key given without a value.
  static Node empty_map();

 private:
  friend class Document;
  template <bool kPairs>
  friend class Children;
  Node(const detail::Tree* tree, std::uint32_t index) : tree_(tree), index_(index) {}
  const detail::Tree* tree_ = nullptr;
  std::uint32_t index_ = 0;
};

class Document {
 public:
  // Every document of a YAML stream; throws SyntaxError.
  static std::vector<Document> parse_all(std::string_view text);

  Node root() const {
    return tree_->root == detail::Tree::kNone ? Node() : Node(tree_.get(), tree_->root);
  }

 private:
  friend class Builder;
  friend class Node;
  std::unique_ptr<detail::Tree> tree_ = std::make_unique<detail::Tree>();
};

// A node's children: a list's items (Node), or a map's key/value pairs (std::pair).
template <bool kPairs>
class Children {
 public:
  class iterator {
   public:
    iterator(const detail::Tree* t, const std::uint32_t* at) : tree_(t), at_(at) {}
    auto operator*() const {
      if constexpr (kPairs) {
        return std::pair<Node, Node>(Node(tree_, at_[0]), Node(tree_, at_[1]));
      } else {
        return Node(tree_, *at_);
      }
    }
    iterator& operator++() {
      at_ += kPairs ? 2 : 1;
      return *this;
    }
    bool operator!=(const iterator& other) const { return at_ != other.at_; }

   private:
    const detail::Tree* tree_;
    const std::uint32_t* at_;
  };
  iterator begin() const { return {tree_, begin_}; }
  iterator end() const { return {tree_, end_}; }

 private:
  friend class Node;
  Children(const detail::Tree* t, const std::uint32_t* b, const std::uint32_t* e)
      : tree_(t), begin_(b), end_(e) {}
  const detail::Tree* tree_;
  const std::uint32_t* begin_;
  const std::uint32_t* end_;
};

}  // namespace bk::yaml
