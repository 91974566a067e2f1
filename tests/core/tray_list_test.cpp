#include <doctest/doctest.h>

#include <vector>

#include "core/tray_list.h"

using namespace rackchaos;

TEST_CASE("core.tray_list: copies share one list, lists made apart are equal but not the same") {
  TrayList a = std::vector<ComponentId>{3, 7, 9};
  TrayList b = a;
  TrayList c{3, 7, 9};
  CHECK(b.SameAs(a));
  CHECK(&b.ids() == &a.ids());  // no copy of the ids
  CHECK_FALSE(c.SameAs(a));
  CHECK(c == a);
  CHECK(a == std::vector<ComponentId>{3, 7, 9});
  CHECK_FALSE(a == TrayList{3, 7});
  CHECK(a.size() == 3);
  CHECK(a[1] == 7);
}

TEST_CASE("core.tray_list: membership by binary search when sorted, by a scan when not") {
  TrayList sorted{2, 4, 8, 16};
  TrayList unsorted{16, 2, 8, 4};
  CHECK(sorted.sorted());
  CHECK_FALSE(unsorted.sorted());
  for (ComponentId t : {2u, 4u, 8u, 16u}) {
    CHECK(sorted.Contains(t));
    CHECK(unsorted.Contains(t));
  }
  for (ComponentId t : {0u, 3u, 17u}) {
    CHECK_FALSE(sorted.Contains(t));
    CHECK_FALSE(unsorted.Contains(t));
  }
}

TEST_CASE("core.tray_list: the empty list holds nothing and every empty list is the same") {
  TrayList none;
  TrayList from_empty = std::vector<ComponentId>{};
  CHECK(none.empty());
  CHECK(none.size() == 0);
  CHECK(none.begin() == none.end());
  CHECK(none.sorted());
  CHECK_FALSE(none.Contains(0));
  CHECK(none.SameAs(from_empty));
  CHECK(none == std::vector<ComponentId>{});
}

TEST_CASE("core.tray_list: Ascending keeps the ids and their order and searches them as sorted") {
  TrayList merged = TrayList::Ascending({2, 5, 9, 40});
  CHECK(merged.sorted());
  CHECK(merged == std::vector<ComponentId>{2, 5, 9, 40});
  CHECK(merged == TrayList{2, 5, 9, 40});
  CHECK(merged.Contains(9));
  CHECK_FALSE(merged.Contains(6));
  TrayList none = TrayList::Ascending({});
  CHECK(none.empty());
  CHECK(none.SameAs(TrayList{}));
}
