"""REST endpoints of the grading app under /api/v1/: each module contributes its own."""

from grading.api import adjudication, agreement, oversight, sessions, workspace

urlpatterns = [
    *workspace.urlpatterns,
    *sessions.urlpatterns,
    *adjudication.urlpatterns,
    *agreement.urlpatterns,
    *oversight.urlpatterns,
]
