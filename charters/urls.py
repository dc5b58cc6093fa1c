"""HTML pages of Layer 1, one module per concern."""

from charters.views import audit, charters, configurations, task_sets, use_cases

urlpatterns = [
    *use_cases.urlpatterns,
    *audit.urlpatterns,
    *charters.urlpatterns,
    *configurations.urlpatterns,
    *task_sets.urlpatterns,
]
